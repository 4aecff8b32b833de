package hooks

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encoder is one way a secret can leave: the encoded form and the layer
// the scanner should name.
type encoder struct {
	name   string
	encode func(string) string
	want   func(encoded string) Encoding
}

func always(e Encoding) func(string) Encoding { return func(string) Encoding { return e } }

// urlSafeLabel: URL-safe output without '-' or '_' is indistinguishable
// from the standard alphabet.
func urlSafeLabel(s string) Encoding {
	if strings.ContainsAny(s, "-_") {
		return Base64URL
	}
	return Base64
}

var encoders = []encoder{
	{"plain", func(s string) string { return s }, always(Plain)},
	{"url every byte", escapeAll, always(URL)},
	{"url path", url.PathEscape, always(URL)},
	{"base64", str(base64.StdEncoding.EncodeToString), always(Base64)},
	{"base64 unpadded", str(base64.RawStdEncoding.EncodeToString), always(Base64)},
	{"base64url", str(base64.URLEncoding.EncodeToString), urlSafeLabel},
	{"base64url unpadded", str(base64.RawURLEncoding.EncodeToString), urlSafeLabel},
	{"base64 wrapped at 76", func(s string) string { return wrap(base64.StdEncoding.EncodeToString([]byte(s)), 76) }, always(Base64)},
	{"hex", str(hex.EncodeToString), always(Hex)},
	{"hex upper", func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }, always(Hex)},
	{"hex wrapped at 60", func(s string) string { return wrap(hex.EncodeToString([]byte(s)), 60) }, always(Hex)},
}

// str adapts the encoding/ functions, which take []byte.
func str(enc func([]byte) string) func(string) string {
	return func(s string) string { return enc([]byte(s)) }
}

// escapeAll percent-encodes every byte but letters and digits, the form
// "sk%2Dant%2D…".
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(alnum, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

// TestScanFindsEveryPatternInEveryEncoding: each secret, bare and after a
// "KEY: " prefix (which shifts base64 alignment), in each encoding, on the
// second line of some tool output.
func TestScanFindsEveryPatternInEveryEncoding(t *testing.T) {
	for _, sc := range secretCases(1) {
		for _, enc := range encoders {
			for _, prefix := range []string{"", "SECRET_KEY: "} {
				t.Run(fmt.Sprintf("%s/%s/prefix=%q", sc.name, enc.name, prefix), func(t *testing.T) {
					payload := prefix + sc.secret
					encoded := enc.encode(payload)
					want := enc.want(encoded)
					at := strings.Index(encoded, sc.secret)
					// A Telegram bot id right after "%20" reads as
					// one longer number: only the URL layer parts them.
					if at >= 0 && !(sc.pattern == PatternTelegram && at > 0) {
						// The encoder left the secret as it was (it
						// escaped the prefix only, or nothing): it is
						// found in the plain text, glued or not.
						want = Plain
					}
					input := "$ run tool\n" + encoded + "\n$ echo done\n"
					found := Scan([]byte(input))
					require.Len(t, found, 1, "findings: %v", found)
					f := found[0]
					assert.Equal(t, sc.pattern, f.Pattern)
					assert.Equal(t, want, f.Encoding)
					assert.Equal(t, 2, f.Line)
					start := len("$ run tool\n")
					assert.GreaterOrEqual(t, f.Offset, start)
					assert.Less(t, f.Offset, start+len(encoded))
					if want == Plain {
						assert.Equal(t, start+at, f.Offset)
					}
					assert.Equal(t, redact([]byte(sc.secret)), f.Redacted)
					assert.NotContains(t, f.String(), sc.secret[:8])
				})
			}
		}
	}
}

func TestScanRedactsEveryFinding(t *testing.T) {
	var all strings.Builder
	cases := secretCases(2)
	for _, sc := range cases {
		all.WriteString("value: " + sc.secret + "\n")
	}
	found := Scan([]byte(all.String()))
	require.Len(t, found, len(cases))
	for i, f := range found {
		assert.Equal(t, cases[i].pattern, f.Pattern)
		assert.Equal(t, cases[i].secret[:4]+"…("+fmt.Sprint(len(cases[i].secret))+" chars)", f.Redacted)
		assert.NotContains(t, f.String(), cases[i].secret[4:])
	}
}
