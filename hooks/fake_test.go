package hooks

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Secrets in these tests are generated, never written out: the sources stay
// free of anything a scanner (this one included) would report.

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	token  = alnum + "_-"
	digit  = "0123456789"
	hexLow = "0123456789abcdef"
	// base32Alpha is the alphabet of AWS key ids after their prefix.
	base32Alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	letters     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// jwt makes a signed JSON Web Token: header, claims, a 32-byte HMAC.
func jwt(f fake) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"sub":"`+f.str(digit, 10)+`","name":"`+f.str(alnum, 12)+`","iat":1516239022}`)) + "." +
		enc.EncodeToString([]byte(f.str(alnum+"\x00\x01\xfe\xff", 32)))
}

// mixed makes n letters, half of each case, shuffled: a Hugging Face
// token's body.
func mixed(f fake, n int) string {
	b := []byte(strings.ToUpper(f.str(letters[26:], n/2)) + f.str(letters[26:], n-n/2))
	f.r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	return string(b)
}

// fake makes random strings from a fixed seed so failures reproduce.
type fake struct{ r *rand.Rand }

func newFake(seed uint64) fake { return fake{rand.New(rand.NewPCG(seed, 0x636f7272616c))} }

func (f fake) str(alphabet string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[f.r.IntN(len(alphabet))])
	}
	return b.String()
}

// withDigit forces a digit in, as the patterns that need one assume.
func (f fake) withDigit(alphabet string, n int) string {
	s := []byte(f.str(alphabet, n))
	s[f.r.IntN(n)] = digit[f.r.IntN(10)]
	return string(s)
}

func (f fake) pem(kind string) string {
	body := base64.StdEncoding.EncodeToString([]byte(f.str(alnum, 600)))
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "-----\n")
	for len(body) > 64 {
		b.WriteString(body[:64] + "\n")
		body = body[64:]
	}
	b.WriteString(body + "\n-----END " + kind + "-----")
	return b.String()
}

// secretCase is one secret of a known pattern.
type secretCase struct {
	name    string
	pattern string
	secret  string
}

// secretCases returns at least one secret of every form each pattern covers.
func secretCases(seed uint64) []secretCase {
	f := newFake(seed)
	discordID := base64.RawStdEncoding.EncodeToString([]byte("1" + f.str(digit, 17)))
	return []secretCase{
		{"rsa pem", PatternPrivateKey, f.pem("RSA PRIVATE KEY")},
		{"pkcs8 pem", PatternPrivateKey, f.pem("PRIVATE KEY")},
		{"openssh pem", PatternPrivateKey, f.pem("OPENSSH PRIVATE KEY")},
		{"ec pem", PatternPrivateKey, f.pem("EC PRIVATE KEY")},
		{"pgp block", PatternPrivateKey, f.pem("PGP PRIVATE KEY BLOCK")},
		{"anthropic", PatternAnthropic, "sk-ant-api03-" + f.str(token, 93) + "AA"},
		{"anthropic admin", PatternAnthropic, "sk-ant-admin01-" + f.str(token, 93) + "AA"},
		{"openrouter", PatternOpenRouter, "sk-or-v1-" + f.withDigit(hexLow, 64)},
		{"openai legacy", PatternOpenAI, "sk-" + f.withDigit(alnum, 48)},
		{"openai project", PatternOpenAI, "sk-proj-" + f.withDigit(token, 156)},
		{"openai service account", PatternOpenAI, "sk-svcacct-" + f.withDigit(token, 156)},
		{"openai default project", PatternOpenAI, "sk-None-" + f.withDigit(token, 48)},
		{"openai with marker", PatternOpenAI, "sk-" + f.str(token, 30) + "T3BlbkFJ" + f.str(token, 30)},
		{"github classic", PatternGitHub, "ghp_" + f.str(alnum, 36)},
		{"github oauth", PatternGitHub, "gho_" + f.str(alnum, 36)},
		{"github user-to-server", PatternGitHub, "ghu_" + f.str(alnum, 36)},
		{"github server-to-server", PatternGitHub, "ghs_" + f.str(alnum, 36)},
		{"github refresh", PatternGitHub, "ghr_" + f.str(alnum, 76)},
		{"github fine-grained", PatternGitHub, "github_pat_" + f.str(alnum, 22) + "_" + f.str(alnum, 59)},
		{"google", PatternGoogle, "AIza" + f.str(token, 35)},
		{"slack bot", PatternSlackBot, "xoxb-" + f.str(digit, 12) + "-" + f.str(digit, 13) + "-" + f.str(alnum, 24)},
		{"slack app", PatternSlackApp, "xapp-1-A" + f.str("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 10) + "-" + f.str(digit, 13) + "-" + f.str(hexLow, 64)},
		{"discord", PatternDiscord, discordID + "." + f.str(token, 6) + "." + f.str(token, 38)},
		{"telegram", PatternTelegram, "1" + f.str(digit, 9) + ":AA" + f.str(token, 33)},
		{"brave", PatternBrave, "BSA" + f.withDigit(token, 28)},
		// The formats below follow each provider's documented shape.
		{"aws access key id", PatternAWS, "AKIA" + f.str(base32Alpha, 16)},
		{"aws temporary key id", PatternAWS, "ASIA" + f.str(base32Alpha, 16)},
		{"slack user", PatternSlack, "xoxp-" + f.str(digit, 12) + "-" + f.str(digit, 12) + "-" + f.str(digit, 13) + "-" + f.str(hexLow, 32)},
		{"slack workspace", PatternSlack, "xoxa-2-" + f.str(digit, 12) + "-" + f.str(digit, 13) + "-" + f.str(hexLow, 64)},
		{"slack refresh", PatternSlack, "xoxr-" + f.str(digit, 12) + "-" + f.str(digit, 12) + "-" + f.str(alnum, 40)},
		{"slack config", PatternSlack, "xoxe.xoxp-1-" + f.withDigit(alnum, 140)},
		{"stripe secret", PatternStripe, "sk_live_51" + f.withDigit(alnum, 97)},
		{"stripe restricted", PatternStripe, "rk_live_" + f.withDigit(alnum, 24)},
		{"jwt", PatternJWT, jwt(f)},
		{"gitlab personal", PatternGitLab, "glpat-" + f.withDigit(token, 20)},
		{"gitlab deploy", PatternGitLab, "gldt-" + f.withDigit(token, 20)},
		{"npm", PatternNPM, "npm_" + f.withDigit(alnum, 36)},
		{"huggingface", PatternHugging, "hf_" + mixed(f, 34)},
		{"sendgrid", PatternSendGrid, "SG." + f.withDigit(token, 22) + "." + f.withDigit(token, 43)},
	}
}
