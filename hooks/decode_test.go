package hooks

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

var base64Encodings = map[string]*base64.Encoding{
	"std":        base64.StdEncoding,
	"std raw":    base64.RawStdEncoding,
	"url":        base64.URLEncoding,
	"url raw":    base64.RawURLEncoding,
	"std strict": base64.StdEncoding.Strict(),
}

func TestDecodeBase64(t *testing.T) {
	for _, plain := range []string{"", "a", "ab", "abc", "abcd", "sk-ant-\xff\xfe\x00 binary", "é ü"} {
		for name, enc := range base64Encodings {
			s := enc.EncodeToString([]byte(plain))
			assert.Equal(t, plain, string(decodeBase64(nil, []byte(s))), "%s %q", name, s)
		}
	}
	cases := []struct{ in, want string }{
		{"YWJj\nZGVm", "abcdef"},   // wrapped
		{"YWJj\r\nZGVm", "abcdef"}, // CRLF
		{"YQ==trailing", "a"},      // stops at padding
		{"YWJjZ", "abc"},           // a lone last 6 bits is no byte
		{"YW Jj", "abc"},           // other bytes skipped
		{"-_-_", "\xfb\xff\xbf"},   // URL-safe alphabet
		{"+/+/", "\xfb\xff\xbf"},   // standard alphabet
		{"", ""},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, string(decodeBase64(nil, []byte(tc.in))), "%q", tc.in)
	}
}

func TestDecodeHex(t *testing.T) {
	cases := []struct{ in, want string }{
		{"736b2d", "sk-"},
		{"736B2D", "sk-"},
		{"736b\n2d", "sk-"},
		{"736b2", "sk"}, // trailing odd digit dropped
		{"", ""},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, string(decodeHex(nil, []byte(tc.in))), "%q", tc.in)
	}
}

func TestDecodeURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"sk%2Dant%2d", "sk-ant-"},
		{"a+b", "a+b"},
		{"100%", "100%"},
		{"%zz%4", "%zz%4"},
		{"%%41", "%A"},
		{"", ""},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, string(decodeURL(nil, []byte(tc.in))), "%q", tc.in)
	}
}

// TestOffsets: each decoded byte maps back to the encoded byte it starts in.
func TestOffsets(t *testing.T) {
	plain := []byte("0123456789abcdefghij")
	b64 := []byte(wrap(base64.StdEncoding.EncodeToString(plain), 8))
	hx := []byte(wrap(hex.EncodeToString(plain), 10))
	u := []byte(url.PathEscape("a b/c d/e f/g"))
	last := -1
	cb, ch := cursor{src: b64}, cursor{src: hx}
	for d := range plain {
		i := cb.base64(d)
		assert.Greater(t, i, last, "base64 offsets grow")
		last = i
		if d%3 == 0 { // a group boundary: decoding can restart there
			assert.Equal(t, plain[d], decodeBase64(nil, b64[i:])[0], "base64 %d", d)
		}
		assert.Equal(t, plain[d], decodeHex(nil, hx[ch.hex(d):])[0], "hex %d", d)
	}
	dec := decodeURL(nil, u)
	cu := cursor{src: u}
	for d := range dec {
		assert.Equal(t, dec[d], decodeURL(nil, u[cu.url(d):])[0], "url %d", d)
	}
}
