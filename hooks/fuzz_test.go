package hooks

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The seed corpus of each target runs in every `go test`; explore with
// e.g. `go test -fuzz FuzzScan ./hooks`.

func FuzzDecodeBase64(f *testing.F) {
	for _, s := range []string{"", "a", "sk-ant-", "\x00\xff\xfe", strings.Repeat("xyz", 30)} {
		f.Add([]byte(s))
	}
	f.Add([]byte("YWJj\r\nZGVm=="))
	f.Fuzz(func(t *testing.T, data []byte) {
		for name, enc := range base64Encodings {
			s := []byte(enc.EncodeToString(data))
			require.Equal(t, data, decodeBase64([]byte{}, s), name)
		}
		out := decodeBase64(nil, data)
		require.LessOrEqual(t, len(out), len(data)*3/4+1)
		c := cursor{src: data}
		for d := range out {
			require.Less(t, c.base64(d), len(data))
		}
	})
}

func FuzzDecodeHex(f *testing.F) {
	for _, s := range []string{"", "a", "sk-ant-", "\x00\xff"} {
		f.Add([]byte(s))
	}
	f.Add([]byte("736b\n2d7"))
	f.Fuzz(func(t *testing.T, data []byte) {
		require.Equal(t, data, decodeHex([]byte{}, []byte(hex.EncodeToString(data))))
		out := decodeHex(nil, data)
		require.LessOrEqual(t, len(out), len(data)/2)
		c := cursor{src: data}
		for d := range out {
			require.Less(t, c.hex(d), len(data))
		}
	})
}

func FuzzDecodeURL(f *testing.F) {
	for _, s := range []string{"", "%", "%2", "%2D", "sk%2Dant", "%%41%zz", "a+b c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, s, string(decodeURL(nil, []byte(escapeAll(s)))))
		require.Equal(t, s, string(decodeURL(nil, []byte(url.PathEscape(s)))))
		data := []byte(s)
		out := decodeURL(nil, data)
		require.LessOrEqual(t, len(out), len(data))
		c := cursor{src: data}
		for d := range out {
			require.Less(t, c.url(d), len(data))
		}
	})
}

// FuzzScan: any input scans without panicking, and every finding is well
// formed: in range, ordered, on the right line, redacted.
func FuzzScan(f *testing.F) {
	for i, sc := range secretCases(9) {
		for _, enc := range encoders {
			f.Add([]byte("x\n" + enc.encode(sc.secret) + strings.Repeat(" ", i)))
		}
	}
	for _, s := range []string{"", "sk-", "-----BEGIN PRIVATE KEY-----\\n", "%%%", "\\nsk-ant-", "\\u00", "\\x7", "0000: 41 42", "{0x", "H4sI"} {
		f.Add([]byte(s))
	}
	key := secretCases(9)[5].secret
	f.Add([]byte(wrap("KEY="+key, 9)))
	f.Add([]byte(xxd(key) + hexdumpC(key)))
	f.Add([]byte(unicodeEscape(key) + pyBytes(key)))
	f.Add([]byte(base64.StdEncoding.EncodeToString(gzipped(key))))
	f.Fuzz(func(t *testing.T, data []byte) {
		found := Scan(data)
		prev := -1
		for _, x := range found {
			require.GreaterOrEqual(t, x.Offset, prev, "ordered")
			prev = x.Offset
			require.Less(t, x.Offset, len(data))
			require.Greater(t, x.end, x.Offset, "the encoded form ends after it starts")
			require.LessOrEqual(t, x.end, len(data))
			require.Equal(t, 1+bytes.Count(data[:x.Offset], []byte{'\n'}), x.Line)
			require.GreaterOrEqual(t, x.Length, 20, "no pattern matches fewer bytes")
			shown, rest, ok := strings.Cut(x.Redacted, "…")
			require.True(t, ok, x.Redacted)
			require.Len(t, shown, 4)
			require.Equal(t, "("+strconv.Itoa(x.Length)+" chars)", rest)
		}
	})
}

// FuzzScanSecret: a known secret in any encoding, between arbitrary lines
// of words, is found and never shown.
func FuzzScanSecret(f *testing.F) {
	n, m := len(secretCases(0)), len(encoders)
	for i := range n * m {
		f.Add(uint64(i), uint8(i%n), uint8(i/n), "some words before", "and after")
	}
	f.Fuzz(func(t *testing.T, seed uint64, kind, encIdx uint8, before, after string) {
		sc := secretCases(seed)[int(kind)%n]
		enc := encoders[int(encIdx)%m]
		encoded := enc.encode(sc.secret)
		input := words(before) + "\n" + encoded + "\n" + words(after)
		found := Scan([]byte(input))
		start := len(words(before)) + 1
		hit := false
		for _, x := range found {
			assert.NotContains(t, x.String(), sc.secret[4:12])
			if x.Pattern == sc.pattern && x.Offset >= start && x.Offset < start+len(encoded) {
				hit = true
			}
		}
		require.True(t, hit, "%s in %s not found in %q: %v", sc.name, enc.name, input, found)
	})
}

// words maps fuzz bytes onto lower-case letters and spaces, which form no
// secret of their own.
func words(s string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz "
	b := []byte(s)
	for i, c := range b {
		b[i] = alphabet[int(c)%len(alphabet)]
	}
	return string(b)
}

// FuzzRedact: whatever the input, what Redact returns holds nothing Scan
// finds, and an input without a finding comes back as it was.
func FuzzRedact(f *testing.F) {
	for i, sc := range secretCases(3) {
		enc := encoders[i%len(encoders)]
		f.Add([]byte("line one\n" + enc.encode(sc.secret) + "\nline three\n"))
	}
	f.Add([]byte("no secret here\n"))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nMIIE\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		out, found := Redact(data)
		require.Equal(t, in, data, "Redact modified its input")
		require.Empty(t, Scan(out), "the output still holds a secret: %q", out)
		if len(found) == 0 {
			require.Equal(t, data, out)
		}
	})
}

// FuzzRedactSecret: a known secret in any encoding, between lines of
// words, is redacted: neither it nor its encoded form is left.
func FuzzRedactSecret(f *testing.F) {
	n, m := len(secretCases(0)), len(encoders)
	for i := range n * m {
		f.Add(uint64(i), uint8(i%n), uint8(i/n), "some words before", "and after")
	}
	f.Fuzz(func(t *testing.T, seed uint64, kind, encIdx uint8, before, after string) {
		sc := secretCases(seed)[int(kind)%n]
		encoded := encoders[int(encIdx)%m].encode(sc.secret)
		out, found := Redact([]byte(words(before) + "\n" + encoded + "\n" + words(after)))
		require.NotEmpty(t, found)
		for _, line := range strings.Split(encoded, "\n") {
			if len(line) >= 16 {
				require.NotContains(t, string(out), line)
			}
		}
		require.NotContains(t, string(out), sc.secret[:min(len(sc.secret), 24)])
	})
}
