package hooks

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
)

// PatternKnown is the pattern of a Known value found, whatever its shape.
const PatternKnown = "known"

// Known is a secret the caller holds itself, such as one a sandbox's proxy
// adds to requests (corral's Config.Secrets): its Value is a leak wherever
// it shows, in any shape, and its Placeholder, which the command holds in
// its place, is none, even when it looks like a token.
type Known struct {
	Name        string
	Value       string
	Placeholder string
}

// ScanKnown is Scan that also finds each known value, plain,
// percent-encoded, in hex or in base64 (either alphabet, at any offset of
// a longer run), reported as [PatternKnown] with Redacted naming the
// secret instead of showing any of it; and that leaves placeholders out.
func ScanKnown(data []byte, known []Known) []Finding {
	if len(known) == 0 {
		return Scan(data)
	}
	// Placeholders become blanks of their length: offsets stay.
	masked := data
	for _, k := range known {
		if k.Placeholder != "" && bytes.Contains(masked, []byte(k.Placeholder)) {
			masked = bytes.ReplaceAll(masked, []byte(k.Placeholder), bytes.Repeat([]byte{' '}, len(k.Placeholder)))
		}
	}
	s := &scan{data: data}
	s.findings = Scan(masked)
	for _, k := range known {
		if k.Value == "" {
			continue
		}
		for _, f := range knownForms(k.Value) {
			for at := 0; ; {
				i := bytes.Index(data[at:], f.form)
				if i < 0 {
					break
				}
				at += i
				s.findings = append(s.findings, Finding{Pattern: PatternKnown, Encoding: f.enc, Offset: at, Length: len(k.Value),
					Redacted: fmt.Sprintf("%s (%d chars)", k.Name, len(k.Value)), end: at + len(f.form)})
				at += len(f.form)
			}
		}
	}
	return s.result()
}

// RedactKnown is Redact with ScanKnown's known values and placeholders.
func RedactKnown(data []byte, known []Known) ([]byte, []Finding) {
	found := ScanKnown(data, known)
	if len(found) == 0 {
		return data, nil
	}
	out := redactLines(data, found)
	if len(ScanKnown(out, known)) > 0 {
		out = []byte(fmt.Sprintf("[redacted: the whole output, which held %s]\n", summary(found)))
	}
	return out, found
}

type knownForm struct {
	enc  Encoding
	form []byte
}

// knownForms are the shapes of v looked for: as it is, percent-encoded,
// in hex, and in base64 at each of the three offsets it can start at in a
// longer encoding (the bytes that depend on its neighbours left out).
func knownForms(v string) []knownForm {
	out := []knownForm{{Plain, []byte(v)}}
	if q := url.QueryEscape(v); q != v {
		out = append(out, knownForm{URL, []byte(q)})
	}
	h := hex.EncodeToString([]byte(v))
	out = append(out, knownForm{Hex, []byte(h)}, knownForm{Hex, []byte(strings.ToUpper(h))})
	for _, enc := range []struct {
		name Encoding
		e    *base64.Encoding
	}{{Base64, base64.RawStdEncoding}, {Base64URL, base64.RawURLEncoding}} {
		for shift := 0; shift < 3; shift++ {
			b := enc.e.EncodeToString(append(make([]byte, shift), v...))
			// Skip the characters that hold the shift's bytes, and the
			// last one, which depends on what follows.
			lead := (shift*8 + 5) / 6
			if len(b)-1 <= lead+8 {
				continue
			}
			out = append(out, knownForm{enc.name, []byte(b[lead : len(b)-1])})
		}
	}
	return out
}
