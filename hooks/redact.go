package hooks

import (
	"bytes"
	"fmt"
	"slices"
)

// Redact returns data with every line that holds a secret, or a part of
// its encoded form, replaced by a marker naming its kind, and the secrets
// found; an encoded secret's line is redacted together with the lines of
// base64 or hex that continue it. What is left is scanned again, and if
// anything is still found the whole of data is replaced by one marker.
// The result never holds a secret Scan finds; data is not modified.
func Redact(data []byte) ([]byte, []Finding) {
	found := Scan(data)
	if len(found) == 0 {
		return data, nil
	}
	out := redactLines(data, found)
	if len(Scan(out)) > 0 {
		out = []byte(fmt.Sprintf("[redacted: the whole output, which held %s]\n", summary(found)))
	}
	return out, found
}

// redactLines replaces the lines each finding covers.
func redactLines(data []byte, found []Finding) []byte {
	cover := make([]bool, bytes.Count(data, []byte{'\n'})+1)
	lines := bytes.SplitAfter(data, []byte{'\n'})
	starts := make([]int, 0, len(lines))
	for i, at := 0, 0; i < len(lines); i++ {
		starts = append(starts, at)
		at += len(lines[i])
	}
	for _, f := range found {
		first := f.Line - 1
		if first < 0 || first >= len(lines) {
			continue
		}
		// Every line the secret or its encoded form spans: a folded
		// secret, a hex dump, a wrapped run.
		last, _ := slices.BinarySearch(starts, max(f.end, f.Offset+1))
		for i := first; i < min(last, len(lines)); i++ {
			cover[i] = true
		}
		cover[first] = true
		switch {
		case f.Pattern == PatternPrivateKey && f.Encoding == Plain:
			// The key body follows its BEGIN line, up to the END line.
			for i := first + 1; i < len(lines) && !bytes.Contains(lines[i-1], []byte("-----END")); i++ {
				cover[i] = true
			}
		case f.Encoding != Plain && f.Encoding != URL:
			for i := first + 1; i < len(lines) && encodedLine(lines[i]); i++ {
				cover[i] = true
			}
		}
	}
	var b bytes.Buffer
	for i, l := range lines {
		if !cover[i] {
			b.Write(l)
			continue
		}
		b.WriteString("[redacted: this line held a secret]")
		if bytes.HasSuffix(l, []byte{'\n'}) {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// encodedLine reports whether l continues a wrapped base64 or hex block:
// not empty, and only characters of those alphabets.
func encodedLine(l []byte) bool {
	l = bytes.TrimRight(l, "\r\n")
	if len(l) == 0 {
		return false
	}
	for _, c := range l {
		if b64Value[c] == invalid && c != '=' {
			return false
		}
	}
	return true
}
