package egress

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
)

// Secret is a credential the proxy adds to requests in place of a
// placeholder: the command holds Placeholder, and the proxy writes Value
// where Placeholder appears in a request to one of Domains, and nowhere
// else.
type Secret struct {
	// Name names the secret in reports: the variable the command finds
	// the placeholder in. Never the value.
	Name        string
	Value       string
	Placeholder string
	// Domains are entries in the form of Rules' domains: "api.github.com",
	// "*.github.com", each with an optional ":port".
	Domains []string
	// Body has the placeholder replaced in request bodies too; otherwise
	// only in headers and the URL's query.
	Body bool
}

// SecretOptions turn on secrets at the proxy (Options.Secrets).
type SecretOptions struct {
	Secrets []Secret
	// CA signs the certificates the proxy presents to the command for the
	// HTTPS destinations that carry a secret; the command trusts it.
	CA *CA
	// Roots verify the real servers behind those destinations; nil is
	// CallerRoots(nil).
	Roots *x509.CertPool
	// OnExposure, when set, is called when a request the proxy can read
	// carries a placeholder to a destination its secret is not bound to:
	// the placeholder goes out as it is, and is told here.
	OnExposure func(Exposure)
}

// Exposure is a placeholder seen on its way to a destination its secret
// is not bound to. It holds no value.
type Exposure struct {
	Name string // the secret's name
	Host string
	Port int
}

// String is the line the caller logs: "corral: the placeholder of
// GITHUB_TOKEN went to evil.example:80 as it is (GITHUB_TOKEN is added
// only for api.github.com)".
func (e Exposure) String() string {
	return fmt.Sprintf("corral: the placeholder of %s went to %s:%d as it is (not a domain of that secret)", e.Name, e.Host, e.Port)
}

// secretSet is SecretOptions parsed: each secret with its domains as
// rules, and the CA.
type secretSet struct {
	list       []boundSecret
	ca         *CA
	onExposure func(Exposure)
}

type boundSecret struct {
	Secret
	domains *Rules
	bytes   [2][]byte // placeholder, value
}

// newSecretSet checks o: every secret named, with a value, a placeholder
// that is neither the value nor holds it, and domains that parse.
func newSecretSet(o *SecretOptions) (*secretSet, error) {
	if o == nil || len(o.Secrets) == 0 {
		return nil, nil
	}
	if o.CA == nil {
		return nil, errors.New("egress: secrets need a CA")
	}
	s := &secretSet{ca: o.CA, onExposure: o.OnExposure}
	for _, x := range o.Secrets {
		switch {
		case x.Name == "":
			return nil, errors.New("egress: a secret without a name")
		case x.Value == "":
			return nil, fmt.Errorf("egress: secret %s: empty value", x.Name)
		case len(x.Placeholder) < minRandom || strings.Contains(x.Placeholder, x.Value) || strings.Contains(x.Value, x.Placeholder):
			return nil, fmt.Errorf("egress: secret %s: the placeholder must be random, at least %d bytes, and neither hold nor lie in the value", x.Name, minRandom)
		case len(x.Domains) == 0:
			return nil, fmt.Errorf("egress: secret %s: no domain", x.Name)
		}
		r, err := ParseRules(x.Domains, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("egress: secret %s: %w", x.Name, err)
		}
		s.list = append(s.list, boundSecret{Secret: x, domains: r, bytes: [2][]byte{[]byte(x.Placeholder), []byte(x.Value)}})
	}
	return s, nil
}

// bound reports whether a secret is added for t: the proxy terminates TLS
// to t and rewrites its requests.
func (s *secretSet) bound(t target) bool {
	if s == nil || t.name == "" {
		return false
	}
	for _, x := range s.list {
		if x.domains.checkName(t.name, t.port) == "" {
			return true
		}
	}
	return false
}

// apply writes into r, a request to t, the value of every secret bound to
// t in place of its placeholder, in the headers and the URL's query (and
// the body for a secret that asks), and tells every other placeholder r
// carries in them. The headers the proxy itself would drop are dropped
// first.
func (s *secretSet) apply(r *http.Request, t target) {
	r.Header.Del("Proxy-Authorization")
	for i := range s.list {
		x := &s.list[i]
		bound := t.name != "" && x.domains.checkName(t.name, t.port) == ""
		if !bound {
			if s.carries(r, x) && s.onExposure != nil {
				s.onExposure(Exposure{Name: x.Name, Host: t.host, Port: t.port})
			}
			continue
		}
		replaceHeaders(r.Header, x.Placeholder, x.Value)
		if strings.Contains(r.URL.RawQuery, x.Placeholder) {
			r.URL.RawQuery = strings.ReplaceAll(r.URL.RawQuery, x.Placeholder, url.QueryEscape(x.Value))
		}
		if x.Body && r.Body != nil && r.Body != http.NoBody {
			r.Body = replacing(r.Body, x.bytes[0], x.bytes[1])
			if len(x.Placeholder) != len(x.Value) {
				r.ContentLength = -1
				r.Header.Del("Content-Length")
			}
		}
	}
}

// carries reports whether r's headers or URL hold x's placeholder, Basic
// authorization included.
func (s *secretSet) carries(r *http.Request, x *boundSecret) bool {
	if strings.Contains(r.URL.RawQuery, x.Placeholder) || strings.Contains(r.URL.Path, x.Placeholder) {
		return true
	}
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, x.Placeholder) || strings.Contains(basicPassword(v), x.Placeholder) {
				return true
			}
		}
	}
	return false
}

// replaceHeaders writes value for placeholder in every header, inside
// Basic authorization's base64 too (git and curl send a URL's user:password
// there).
func replaceHeaders(h http.Header, placeholder, value string) {
	for k, vs := range h {
		for i, v := range vs {
			if strings.Contains(v, placeholder) {
				vs[i] = strings.ReplaceAll(v, placeholder, value)
				continue
			}
			if up := basicPassword(v); strings.Contains(up, placeholder) {
				scheme, _, _ := strings.Cut(strings.TrimSpace(v), " ")
				vs[i] = scheme + " " + base64.StdEncoding.EncodeToString([]byte(strings.ReplaceAll(up, placeholder, value)))
			}
		}
		h[k] = vs
	}
}

// basicPassword is the decoded "user:password" of a Basic authorization
// value, or "".
func basicPassword(v string) string {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return ""
	}
	return string(b)
}

// scrubResponse puts placeholders back for values in a response from a
// destination that carries secrets, so that a server that echoes a token
// (an error page, a debugging endpoint) does not hand it to the command:
// the headers, and a body that is not compressed.
func (s *secretSet) scrubResponse(resp *http.Response) {
	for i := range s.list {
		x := &s.list[i]
		for k, vs := range resp.Header {
			for j, v := range vs {
				vs[j] = strings.ReplaceAll(v, x.Value, x.Placeholder)
			}
			resp.Header[k] = vs
		}
		if resp.StatusCode == http.StatusSwitchingProtocols || resp.Body == nil || resp.Body == http.NoBody || resp.Header.Get("Content-Encoding") != "" {
			continue
		}
		resp.Body = replacing(resp.Body, x.bytes[1], x.bytes[0])
		if len(x.Value) != len(x.Placeholder) {
			resp.ContentLength = -1
			resp.Header.Del("Content-Length")
		}
	}
}

// redact removes every value from msg: a last guard on what the proxy
// tells the command.
func (s *secretSet) redact(msg string) string {
	if s == nil {
		return msg
	}
	for _, x := range s.list {
		msg = strings.ReplaceAll(msg, x.Value, "["+x.Name+"]")
	}
	return msg
}

// replacer is a reader that writes new for every old in what it reads,
// also across reads: it holds back the last len(old)-1 bytes until it
// knows they do not start an old.
type replacer struct {
	src      io.ReadCloser
	old, new []byte
	in       []byte // read, not yet replaced
	out      []byte // replaced, not yet returned
	eof      bool
	err      error
}

func replacing(src io.ReadCloser, old, new []byte) io.ReadCloser {
	return &replacer{src: src, old: old, new: new}
}

func (r *replacer) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.eof {
			if len(r.in) > 0 {
				r.out, r.in = r.in, nil
				break
			}
			return 0, r.err
		}
		r.fill()
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// fill reads once more and moves what can no longer start an old to out.
func (r *replacer) fill() {
	var buf [32 << 10]byte
	n, err := r.src.Read(buf[:])
	r.in = append(r.in, buf[:n]...)
	if err != nil {
		r.eof, r.err = true, err
	}
	done := r.in
	keep := []byte(nil)
	if !r.eof {
		cut := max(len(r.in)-(len(r.old)-1), 0)
		if i := bytes.LastIndex(r.in, r.old); i >= 0 && i+len(r.old) > cut {
			cut = i + len(r.old)
		}
		done, keep = r.in[:cut], r.in[cut:]
	}
	r.out = bytes.ReplaceAll(done, r.old, r.new)
	r.in = append([]byte(nil), keep...)
}

func (r *replacer) Close() error { return r.src.Close() }

// prefixes are the known starts of tokens that a placeholder keeps, so
// that a tool that checks a token's prefix (gh, npm, SDKs of model APIs)
// accepts it. The longest that starts the value is kept.
var prefixes = []string{
	"github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
	"glpat-", "npm_", "hf_", "pypi-", "xoxb-", "xoxp-", "xapp-",
	"sk-ant-api03-", "sk-ant-", "sk-proj-", "sk-or-v1-", "sk-svcacct-", "sk-admin-", "sk-",
	"sk_live_", "rk_live_", "sk_test_", "AKIA", "ASIA", "AIza", "dop_v1_", "SG.",
}

// minRandom is the fewest random letters and digits a placeholder has.
const minRandom = 24

// NewPlaceholder returns a random placeholder for value: the value's
// known prefix (ghp_, github_pat_, sk-, npm_, ...; see the package doc),
// then letters and digits, to the value's length when that leaves at
// least 24 of them (so that a body keeps its length), else 32.
func NewPlaceholder(value string) (string, error) {
	prefix := ""
	for _, p := range prefixes {
		if strings.HasPrefix(value, p) && len(p) > len(prefix) {
			prefix = p
		}
	}
	n := len(value) - len(prefix)
	if n < minRandom {
		n = 32
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for {
		for i := range b {
			k, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
			if err != nil {
				return "", err
			}
			b[i] = alphabet[k.Int64()]
		}
		ph := prefix + string(b)
		if !strings.Contains(ph, value) && !strings.Contains(value, ph) {
			return ph, nil
		}
	}
}
