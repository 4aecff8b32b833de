package hooks

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byName returns the generated secret of the named case.
func byName(t *testing.T, name string) string {
	for _, sc := range secretCases(6) {
		if sc.name == name {
			return sc.secret
		}
	}
	t.Fatalf("no secret case %q", name)
	return ""
}

// TestPatternPriority: the specific sk- forms win over OpenAI at the same
// position, and each secret is reported once.
func TestPatternPriority(t *testing.T) {
	cases := []struct{ secret, want string }{
		{byName(t, "anthropic"), PatternAnthropic},
		{byName(t, "openrouter"), PatternOpenRouter},
		{byName(t, "openai project"), PatternOpenAI},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			found := Scan([]byte("key " + tc.secret))
			require.Len(t, found, 1)
			assert.Equal(t, tc.want, found[0].Pattern)
			assert.Equal(t, len(tc.secret), found[0].Length)
		})
	}
}

// TestScanContexts: where secrets sit in real tool traffic.
func TestScanContexts(t *testing.T) {
	anthropic := byName(t, "anthropic")
	telegram := byName(t, "telegram")
	pem := byName(t, "rsa pem")
	args, err := json.Marshal(map[string]string{"path": "notes.txt", "content": "line one\n" + anthropic + "\n"})
	require.NoError(t, err)
	pemArgs, err := json.Marshal(map[string]string{"content": pem})
	require.NoError(t, err)
	cases := []struct {
		name, text, pattern string
		enc                 Encoding
	}{
		{"json tool arguments, after an escaped newline", string(args), PatternAnthropic, Plain},
		{"env dump", "HOME=/root\nANTHROPIC_API_KEY=" + anthropic + "\nPATH=/bin", PatternAnthropic, Plain},
		{"http header", "Authorization: Bearer " + anthropic, PatternAnthropic, Plain},
		{"quoted", `key = "` + anthropic + `"`, PatternAnthropic, Plain},
		{"telegram in api url", "GET https://api.telegram.org/bot" + telegram + "/getMe", PatternTelegram, Plain},
		{"url-encoded query", "https://x.example/?q=a%20b&key=" + strings.ReplaceAll(anthropic, "-", "%2D"), PatternAnthropic, URL},
		{"json-escaped pem", string(pemArgs), PatternPrivateKey, Plain},
		{"crlf pem", strings.ReplaceAll(pem, "\n", "\r\n"), PatternPrivateKey, Plain},
		{"kubernetes secret", "data:\n  tls.key: " + base64.StdEncoding.EncodeToString([]byte(pem)) + "\n", PatternPrivateKey, Base64},
		{"data url", "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("token "+anthropic)), PatternAnthropic, Base64},
		{"basic auth", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+anthropic)), PatternAnthropic, Base64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			found := Scan([]byte(tc.text))
			require.Len(t, found, 1, "%v", found)
			assert.Equal(t, tc.pattern, found[0].Pattern)
			assert.Equal(t, tc.enc, found[0].Encoding)
		})
	}
}

func TestPrivateKeyForms(t *testing.T) {
	f := newFake(7)
	body := base64.StdEncoding.EncodeToString([]byte(f.str(alnum, 120)))
	encrypted := "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n\n" + body + "\n-----END RSA PRIVATE KEY-----"
	pgp := "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + body + "\n-----END PGP PRIVATE KEY BLOCK-----"
	truncated := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + body[:40]
	yaml := "tls.key: |\n    -----BEGIN EC PRIVATE KEY-----\n    " + body[:64] + "\n    " + body[64:] + "\n    -----END EC PRIVATE KEY-----"
	for name, text := range map[string]string{"encrypted": encrypted, "pgp": pgp, "truncated": truncated, "yaml": yaml} {
		t.Run(name, func(t *testing.T) {
			found := Scan([]byte("$ cat key\n" + text + "\n$ "))
			require.Len(t, found, 1)
			assert.Equal(t, PatternPrivateKey, found[0].Pattern)
			block := text[strings.Index(text, "-----BEGIN"):]
			assert.Equal(t, len(block), found[0].Length, "the whole block is reported")
		})
	}
}

// TestFindingPositions: offsets point at the secret or its encoded form,
// lines count from 1, and findings come in input order.
func TestFindingPositions(t *testing.T) {
	github := byName(t, "github classic")
	google := byName(t, "google")
	prefix := "first\nsecond\n"
	text := prefix + "a=" + github + "\nb=" + base64.StdEncoding.EncodeToString([]byte(google)) + "\n"
	found := Scan([]byte(text))
	require.Len(t, found, 2)
	assert.Equal(t, Finding{Pattern: PatternGitHub, Encoding: Plain, Offset: len(prefix) + 2, Line: 3, Length: len(github), Redacted: redact([]byte(github)), end: len(prefix) + 2 + len(github)}, found[0])
	assert.Equal(t, PatternGoogle, found[1].Pattern)
	assert.Equal(t, strings.Index(text, "b=")+2, found[1].Offset)
	assert.Equal(t, 4, found[1].Line)
}

// TestWrappedBase64: `env | base64` wraps at 76 columns, cutting secrets in
// two; every secret is still found.
func TestWrappedBase64(t *testing.T) {
	var env strings.Builder
	cases := secretCases(8)[5:] // the tokens, without the PEM blocks
	for _, sc := range cases {
		env.WriteString("X_KEY=" + sc.secret + "\n")
	}
	found := Scan([]byte(wrap(base64.StdEncoding.EncodeToString([]byte(env.String())), 76)))
	require.Len(t, found, len(cases))
	for i, f := range found {
		assert.Equal(t, cases[i].pattern, f.Pattern)
		assert.Equal(t, Base64, f.Encoding)
	}
}

func TestScanEmptyAndTiny(t *testing.T) {
	for _, s := range []string{"", "s", "sk-", "%", "%2", "-----BEGIN ", "A", "1:", "M."} {
		assert.Empty(t, Scan([]byte(s)), "%q", s)
	}
	assert.Empty(t, Scan(nil))
}

// TestOpenAIShapes: "sk-" starts many things; only the known key forms
// count.
func TestOpenAIShapes(t *testing.T) {
	f := newFake(14)
	cases := []struct {
		name, text string
		found      bool
	}{
		{"legacy", "sk-" + f.withDigit(alnum, 48), true},
		{"legacy length with a dash", "sk-" + f.withDigit(alnum, 24) + "-" + f.withDigit(alnum, 23), false},
		{"legacy length but 47", "sk-" + f.withDigit(alnum, 47), false},
		{"admin", "sk-admin-" + f.withDigit(token, 60), true},
		{"unknown shape", "sk-" + f.withDigit(token, 60), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			found := Scan([]byte("key: " + tc.text + "\n"))
			if tc.found {
				require.Len(t, found, 1)
				assert.Equal(t, PatternOpenAI, found[0].Pattern)
			} else {
				assert.Empty(t, found)
			}
		})
	}
}

// TestCutOffPrivateKeyLeavesTheRest: a block without its END line ends
// with its last body line; a key on the next line is its own finding.
func TestCutOffPrivateKeyLeavesTheRest(t *testing.T) {
	pem := byName(t, "ec pem")
	cut := pem[:strings.Index(pem, "-----END")]
	key := byName(t, "anthropic")
	found := Scan([]byte(cut + "and then the key " + key + " too\n"))
	require.Len(t, found, 2)
	assert.Equal(t, PatternPrivateKey, found[0].Pattern)
	assert.Equal(t, len(strings.TrimRight(cut, "\n")), found[0].Length)
	assert.Equal(t, PatternAnthropic, found[1].Pattern)
}
