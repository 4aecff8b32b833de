package hooks

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The probes below were all missed by the scanner before these formats,
// the glued-token rule and the layers for folded lines, base32,
// compressed streams, escapes and hex dumps were added: each test fails
// without them. The formats themselves are in secretCases, so every
// encoding of TestScanFindsEveryPatternInEveryEncoding covers them too.

// TestGluedTokens: a token right after a letter, digit, '_', '-', '/' or
// '+' is still a token when it ends its run of token bytes.
func TestGluedTokens(t *testing.T) {
	for _, sc := range secretCases(21) {
		if sc.pattern == PatternPrivateKey || sc.pattern == PatternDiscord || sc.pattern == PatternTelegram || sc.pattern == PatternBrave {
			continue // no prefix of their own to tell them in a word
		}
		if strings.HasPrefix(sc.secret, "sk-") && !strings.ContainsAny(sc.secret[3:10], "-") && !strings.Contains(sc.secret, "T3BlbkFJ") {
			continue // a legacy OpenAI key glued to a word is "task-…"
		}
		for _, glue := range []string{"x", "7", "_", "-", "/", "+"} {
			t.Run(sc.name+"/"+glue, func(t *testing.T) {
				found := Scan([]byte("value" + glue + sc.secret + "\n"))
				require.Len(t, found, 1, "%v", found)
				assert.Equal(t, sc.pattern, found[0].Pattern)
				assert.Equal(t, len("value"+glue), found[0].Offset)
			})
		}
		t.Run(sc.name+"/path segment", func(t *testing.T) {
			found := Scan([]byte("GET /v1/" + sc.secret + "/items\n"))
			require.Len(t, found, 1, "%v", found)
			assert.Equal(t, sc.pattern, found[0].Pattern)
		})
	}
}

// awsSecretValue and azureKey make values of the documented shapes: 40
// bytes of the base64 alphabet, and base64 of a 64-byte key.
func awsSecretValue(f fake) string { return f.withDigit(alnum+"+/", 40) }

func azureKey(f fake) string {
	return base64.StdEncoding.EncodeToString([]byte(f.str(alnum+"\x00\xff", 64)))
}

// TestSecretsFoundByName: secrets without a prefix of their own, found
// after the name they go by.
func TestSecretsFoundByName(t *testing.T) {
	f := newFake(22)
	secret, key, sas := awsSecretValue(f), azureKey(f), base64.StdEncoding.EncodeToString([]byte(f.str(alnum, 32)))
	cases := []struct{ name, text, pattern, value string }{
		{"aws credentials file", "[default]\naws_access_key_id = AKIA" + f.str(base32Alpha, 16) + "\naws_secret_access_key = " + secret + "\n", PatternAWS, secret},
		{"aws env", "AWS_SECRET_ACCESS_KEY=" + secret + "\n", PatternAWS, secret},
		{"aws env quoted", `export AWS_SECRET_ACCESS_KEY="` + secret + `"`, PatternAWS, secret},
		{"aws sts json", `{"Credentials": {"SecretAccessKey": "` + secret + `", "SessionToken": "x"}}`, PatternAWS, secret},
		{"aws js sdk", `secretAccessKey: '` + secret + `',`, PatternAWS, secret},
		{"aws ruby", `:secret_access_key => "` + secret + `"`, PatternAWS, secret},
		{"azure storage", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + key + ";EndpointSuffix=core.windows.net", PatternAzure, key},
		{"azure service bus", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=" + sas, PatternAzure, sas},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			found := Scan([]byte(tc.text))
			var got []Finding
			for _, x := range found {
				if x.Length == len(tc.value) {
					got = append(got, x)
				}
			}
			require.Len(t, got, 1, "%v", found)
			assert.Equal(t, tc.pattern, got[0].Pattern)
			assert.Equal(t, strings.Index(tc.text, tc.value), got[0].Offset)
			assert.Equal(t, redact([]byte(tc.value)), got[0].Redacted)
		})
	}
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func zlibbed(s string) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// xxd prints s as `xxd` does: offset, eight groups of two bytes, text.
func xxd(s string) string {
	var b strings.Builder
	for off := 0; off < len(s); off += 16 {
		line := s[off:min(off+16, len(s))]
		fmt.Fprintf(&b, "%08x: ", off)
		h := hex.EncodeToString([]byte(line))
		for i := 0; i < 32; i += 4 {
			if i < len(h) {
				b.WriteString(h[i:min(i+4, len(h))])
			}
			b.WriteString(" ")
		}
		b.WriteString(" " + line + "\n")
	}
	return b.String()
}

// hexdumpC prints s as `hexdump -C` does.
func hexdumpC(s string) string {
	var b strings.Builder
	for off := 0; off < len(s); off += 16 {
		line := s[off:min(off+16, len(s))]
		fmt.Fprintf(&b, "%08x  %s  |%s|\n", off, strings.Join(pairs(hex.EncodeToString([]byte(line))), " "), line)
	}
	return b.String()
}

func unicodeEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

// TestEncodedForms: the forms a secret takes when a command folds,
// compresses or dumps it.
func TestEncodedForms(t *testing.T) {
	for _, sc := range secretCases(23)[5:] { // the tokens, not the PEM blocks
		line := "API_KEY=" + sc.secret
		forms := []struct {
			name, text string
			enc        Encoding
		}{
			{"fold -w 20", wrap(line, 20), Folded},
			{"fold -w 8", wrap(line, 8), Folded},
			{"fold -w 80", wrap(strings.Repeat("ab ", 22)+line+" and the rest", 80), Folded},
			{"fold -w 20 crlf", strings.ReplaceAll(wrap(line, 20), "\n", "\r\n"), Folded},
			{"base64 | fold -w 20", wrap(base64.StdEncoding.EncodeToString([]byte(line)), 20), Base64},
			{"base32", wrap(base32.StdEncoding.EncodeToString([]byte(line)), 76), Base32},
			{"base32 unpadded", base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte(line)), Base32},
			{"gzip | base64", wrap(base64.StdEncoding.EncodeToString(gzipped("x\n"+line+"\n")), 76), Gzip},
			{"zlib | base64", base64.StdEncoding.EncodeToString(zlibbed(line)), Gzip},
			{"gzip | xxd -p", wrap(hex.EncodeToString(gzipped(line)), 60), Gzip},
			{"\\u escapes", `{"k": "` + unicodeEscape(line) + `"}`, Escaped},
			{"\\u escapes mixed", `{"k": "` + strings.ReplaceAll(strings.ReplaceAll(line, "-", `\u002d`), "_", `\u005f`) + `"}`, Escaped},
			{"\\x escapes", pyBytes(line), Escaped},
			{"spaced hex", strings.Join(pairs(hex.EncodeToString([]byte(line))), " "), HexDump},
			{"colon hex", strings.Join(pairs(hex.EncodeToString([]byte(line))), ":"), HexDump},
			{"c array", "{0x" + strings.Join(pairs(hex.EncodeToString([]byte(line))), ", 0x") + "}", HexDump},
			{"xxd", xxd(line), HexDump},
			{"hexdump -C", hexdumpC(line), HexDump},
		}
		for _, form := range forms {
			t.Run(sc.name+"/"+form.name, func(t *testing.T) {
				text := "$ cmd\n" + form.text + "\n$ "
				var got []Finding
				for _, f := range Scan([]byte(text)) {
					if f.Length == len(sc.secret) {
						got = append(got, f)
					}
				}
				require.NotEmpty(t, got, "%q", text)
				assert.Equal(t, sc.pattern, got[0].Pattern)
				want := form.enc
				if strings.Contains(form.text, sc.secret) {
					want = Plain // only the name before it was encoded
				}
				assert.Equal(t, want, got[0].Encoding)
				out, _ := Redact([]byte(text))
				assert.Empty(t, Scan(out), "redacted: %q", out)
				assert.NotContains(t, string(out), "whole output", "the lines it spans are redacted, and no more")
				assert.True(t, strings.HasPrefix(string(out), "$ cmd\n") && strings.HasSuffix(string(out), "\n$ "), "%q", out)
			})
		}
	}
}

// pyBytes writes s as Python prints bytes it shows escaped: \xXX each.
func pyBytes(s string) string {
	var b strings.Builder
	b.WriteString("b'")
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\x%02x`, s[i])
	}
	b.WriteString("'")
	return b.String()
}

// TestInflationIsBounded: a gzip bomb inflates to the cap and no
// further, and a secret past the cap is not found (the documented limit).
func TestInflationIsBounded(t *testing.T) {
	key := byName(t, "anthropic")
	bomb := base64.StdEncoding.EncodeToString(gzipped(strings.Repeat("\x00", 64<<20) + key))
	require.Less(t, len(bomb), 128<<10, "the bomb is small")
	assert.Empty(t, Scan([]byte(bomb)), "past %d inflated bytes nothing is read", maxInflate)
	small := base64.StdEncoding.EncodeToString(gzipped(strings.Repeat("\x00", 1<<20) + key))
	found := Scan([]byte(small))
	require.Len(t, found, 1)
	assert.Equal(t, Gzip, found[0].Encoding)

	// The budget is shared: many small bombs together inflate to about
	// maxInflateRatio times the input.
	s := scratch.Get().(*scan)
	defer s.release()
	var many strings.Builder
	for range 64 {
		many.WriteString(bomb + "\n\n")
	}
	s.m, s.data = loadMatcher(), []byte(many.String())
	s.budget = maxInflateRatio*len(s.data) + maxInflate
	start := s.budget
	runs(s.data, &base64Run, s.base64)
	assert.LessOrEqual(t, start-s.budget, maxInflateRatio*len(s.data)+maxInflate)
	assert.LessOrEqual(t, s.budget, 0, "the bombs used the whole budget")
}

// TestEncodedFormsIgnoreOrdinaryOutput: the new layers find nothing in
// output of the same shapes without a secret.
func TestEncodedFormsIgnoreOrdinaryOutput(t *testing.T) {
	f := newFake(24)
	var text strings.Builder
	for range 200 {
		line := f.str(alnum+" .,:;-_/+=", 40+f.r.IntN(200))
		text.WriteString(wrap(line, 20+f.r.IntN(60)) + "\n")
		text.WriteString(wrap(base32.StdEncoding.EncodeToString([]byte(line)), 76) + "\n")
		text.WriteString(base64.StdEncoding.EncodeToString(gzipped(line)) + "\n")
		text.WriteString(xxd(line) + hexdumpC(line))
		text.WriteString(`"` + unicodeEscape(line) + `"` + "\n")
	}
	assert.Empty(t, Scan([]byte(text.String())))
}

// TestRandomBase64WithGlue: the glued-token rule adds no finding in
// megabytes of random base64url, where the prefixes occur by chance.
func TestRandomBase64WithGlue(t *testing.T) {
	f := newFake(25)
	raw := make([]byte, 6<<20)
	for i := range raw {
		raw[i] = byte(f.r.Uint32())
	}
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.StdEncoding} {
		s := enc.EncodeToString(raw)
		assert.Empty(t, Scan([]byte(wrap(s, 76))))
		assert.Empty(t, Scan([]byte(wrap(s, 1000))))
	}
}
