package hooks

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScanIgnoresLookalikes: text that resembles secrets or their
// encodings, and must not stop an agent.
func TestScanIgnoresLookalikes(t *testing.T) {
	f := newFake(3)
	sum1 := sha1.Sum([]byte("a"))
	sum256 := sha256.Sum256([]byte("a"))
	sum512 := sha512.Sum512([]byte("a"))
	cases := []struct{ name, text string }{
		{"git sha", "commit " + hex.EncodeToString(sum1[:]) + "\nAuthor: A <a@example.com>\n"},
		{"git log oneline", "3f2a9c1 fix the task-list\n" + hex.EncodeToString(sum1[:])[:12] + " merge\n"},
		{"sha256sum", hex.EncodeToString(sum256[:]) + "  go1.26.linux-amd64.tar.gz\n"},
		{"sha512", hex.EncodeToString(sum512[:])},
		{"sha256 upper", strings.ToUpper(hex.EncodeToString(sum256[:]))},
		{"docker digest", "image@sha256:" + hex.EncodeToString(sum256[:])},
		{"go.sum", "golang.org/x/sys v0.49.0 h1:" + base64.StdEncoding.EncodeToString(sum256[:]) + "\n"},
		{"uuids", "id=550e8400-e29b-41d4-a716-446655440000 parent=6ba7b810-9dad-11d1-80b4-00c04fd430c8\n"},
		{"uuid no dashes", "550e8400e29b41d4a716446655440000"},
		// A JWT is a bearer credential (see secretCases); an
		// unsigned one, or base64 JSON without the dots, is not.
		{"unsigned jwt", "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"1234567890","name":"x"}`)) + "."},
		{"jwt alg none with a signature", "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"1234567890","name":"x"}`)) + "." + base64.RawURLEncoding.EncodeToString(sum256[:])},
		{"base64 json", "annotation: " + base64.StdEncoding.EncodeToString([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`))},
		{"ssh public key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + base64.StdEncoding.EncodeToString(sum256[:]) + " user@host"},
		{"prose with sk-", "Update the task-list, run a risk-assessment and ask-for-help; disk-usage was fine. sk-learn is a library."},
		{"hyphenated slug", "see /docs/sk-learn-documentation-and-user-guide-notes for details"},
		{"capitalized slug", "sk-Learn-Documentation-And-User-Guide-Notes"},
		{"openai placeholder", "OPENAI_API_KEY=sk-your-openai-api-key-goes-here"},
		{"anthropic placeholder", "ANTHROPIC_API_KEY=sk-ant-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
		{"anthropic placeholder with version", "sk-ant-api03-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
		{"github placeholder", "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
		{"slack placeholder", "SLACK_BOT_TOKEN=xoxb-your-bot-token-here-please"},
		{"brave identifier", "class BSAFileSystemHandlerImplementationFactory"},
		{"telegram placeholder", "TELEGRAM=123456789:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		{"timestamp and hash", "1699999999:da39a3ee5e6b4b0d3255bfef95601890afd80709"},
		{"dotted identifier", "MyApplicationConfigFactory.create.SomethingVeryLongMethodNameHere"},
		{"pem header in code", `if strings.HasPrefix(s, "-----BEGIN RSA PRIVATE KEY-----") {`},
		{"pem header then prose", "-----BEGIN PRIVATE KEY-----\nhere goes the key\n-----END PRIVATE KEY-----"},
		{"public key", f.pem("PUBLIC KEY")},
		{"certificate", f.pem("CERTIFICATE")},
		{"key glued to a longer token", "mysk-ant-api03-" + f.str(token, 60) + "+" + f.str(token, 8)},
		{"prose glued to sk-", "the task-list-with-many-items-in-it and the flask-" + f.str(hexLow, 48)},
		{"aws example key id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"},
		{"aws example secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		{"aws key id placeholder", "AKIAXXXXXXXXXXXXXXXX"},
		{"aws secret name without a value", "export AWS_SECRET_ACCESS_KEY=$(pass aws/secret)"},
		{"aws upper case word", "AKIAVERYLONGCONSTANTNAMEHERE"},
		{"camel case after hf_", "load_hf_ModelConfigurationFromPretrainX()"},
		{"slack placeholder user", "SLACK_USER_TOKEN=xoxp-your-user-token-goes-here"},
		{"stripe test key", "sk_test_" + f.withDigit(alnum, 24)},
		{"stripe publishable", "pk_live_" + f.withDigit(alnum, 24)},
		{"npm placeholder", "npm_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
		{"sendgrid lookalike", "MSG.Header.ContentTypeIsTextPlainCharsetUTF8AndMore"},
		{"azure key placeholder", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=<your-key>;EndpointSuffix=core.windows.net"},
		{"go.sum lines", "github.com/stretchr/testify v1.10.0 h1:" + base64.StdEncoding.EncodeToString(sum256[:]) + "\ngithub.com/stretchr/testify v1.10.0/go.mod h1:" + base64.StdEncoding.EncodeToString(sum256[:]) + "\n"},
		{"base32 of text", "NBSWY3DPEB3W64TMMQQGC3TEEBTW6ZDCPFSSAY3SOVSWY5DXN5ZGYZA="},
		{"spaced hex of a hash", "SHA256 Fingerprint=" + strings.ToUpper(strings.Join(pairs(hex.EncodeToString(sum256[:])), ":"))},
		{"hex dump of text", "00000000: 4865 6c6c 6f2c 2077 6f72 6c64 2120 5468  Hello, world! Th\n00000010: 6973 2069 7320 6120 7465 7374 2e0a       is is a test..\n"},
		{"escapes of text", `"caf\u00e9 na\u00efve \u2014 d\xe9j\xe0 vu"`},
		{"table of equal lines", "NAME      READY   STATUS\nweb-1     1/1     Running\nweb-2     1/1     Running\n"},
		{"paths", "/usr/lib/x86_64-linux-gnu/libc.so.6 /home/user/go/pkg/mod/github.com/spf13/cobra@v1.10.2/command.go"},
		{"percent in prose", "CPU 100% done, 50%% left, %zz %4 %"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Empty(t, Scan([]byte(tc.text)))
		})
	}
}

// TestScanIgnoresRandomEncodings: megabytes of random data in every
// encoding, one blob per line and as long wrapped blobs, without a finding.
func TestScanIgnoresRandomEncodings(t *testing.T) {
	f := newFake(4)
	encs := []struct {
		name string
		enc  func([]byte) string
	}{
		{"base64", base64.StdEncoding.EncodeToString},
		{"base64 unpadded", base64.RawStdEncoding.EncodeToString},
		{"base64url", base64.URLEncoding.EncodeToString},
		{"base64url unpadded", base64.RawURLEncoding.EncodeToString},
		{"hex", hex.EncodeToString},
	}
	for _, e := range encs {
		name, enc := e.name, e.enc
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			for n := 18; b.Len() < 1<<20; n = n%4096 + 7 {
				raw := make([]byte, n)
				for i := range raw {
					raw[i] = byte(f.r.Uint32())
				}
				b.WriteString(enc(raw) + "\n")
			}
			long := make([]byte, 256<<10)
			for i := range long {
				long[i] = byte(f.r.Uint32())
			}
			b.WriteString(wrap(enc(long), 76) + "\n")
			found := Scan([]byte(b.String()))
			assert.Empty(t, found, "%d bytes of random %s", b.Len(), name)
		})
	}
}

// pairs splits s into two-byte pieces.
func pairs(s string) []string {
	var out []string
	for len(s) >= 2 {
		out, s = append(out, s[:2]), s[2:]
	}
	return out
}

func TestScanIgnoresUUIDsAndHashesInBulk(t *testing.T) {
	f := newFake(5)
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		u := f.str(hexLow, 32)
		fmt.Fprintf(&b, "%s-%s-4%s-a%s-%s ", u[:8], u[8:12], u[13:16], u[17:20], u[20:])
		s := sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16)})
		fmt.Fprintf(&b, "%x %x\n", s, s[:20])
	}
	assert.Empty(t, Scan([]byte(b.String())))
}
