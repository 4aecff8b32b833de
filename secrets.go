package corral

import (
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/corralhq/corral/egress"
	"github.com/corralhq/corral/internal/environ"
)

// Secret is a credential commands use without holding it (see
// docs/layers.md, "Secrets"). The command's variable Name holds a
// placeholder, random for each Sandbox and shaped like the value (its
// known prefix kept, such as ghp_ or sk-); the proxy of NetworkAllow
// writes Value in its place in requests to Domains, and nowhere else.
type Secret struct {
	// Name is the variable the command finds the placeholder in.
	Name string
	// Domains are where the value is added, in AllowedDomains' form
	// ("api.github.com", "*.github.com", each with an optional ":port").
	// They must be allowed by AllowedDomains too.
	Domains []string
	// Value is the credential; empty takes the caller's variable Name.
	Value string
	// Body has the placeholder replaced in request bodies too; otherwise
	// only in headers (Authorization, Basic authorization's password,
	// custom ones) and the URL's query.
	Body bool
}

// SecretInfo is a Secret as a Sandbox holds it, without its value.
type SecretInfo struct {
	Name        string
	Domains     []string
	Placeholder string
}

// RulePlaceholder starts the Rule of a ViolationNetwork that is no
// refusal: a request went, as it was, with a secret's placeholder to a
// destination the secret is not added for.
const RulePlaceholder = "the placeholder of secret "

// caVars are the variables that point tools at a CA bundle: with secrets,
// each names the sandbox's bundle (the host's roots and the sandbox's CA).
var caVars = []string{
	"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
	"PIP_CERT", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "NPM_CONFIG_CAFILE", "npm_config_cafile", "DENO_CERT",
}

// secretPolicy is a sandbox's secrets: each with its placeholder, the CA
// the proxy terminates TLS with, the caller's roots it verifies servers
// against, and the bundle file commands trust.
type secretPolicy struct {
	list   []egress.Secret
	ca     *egress.CA
	roots  *x509.CertPool
	dir    string // holds bundle; removed by cleanup
	bundle string
}

// resolveSecrets checks c.Secrets and gives each a placeholder. They need
// NetworkAllow: the proxy is what adds them.
func (s *spec) resolveSecrets(c Config) error {
	if len(c.Secrets) == 0 {
		return nil
	}
	if s.Network != NetworkAllow || s.Mode != ModeEnabled {
		return &ConfigError{Field: "Secrets", Value: c.Secrets[0].Name, Reason: fmt.Sprintf("needs Network %q: the proxy adds them", NetworkAllow)}
	}
	p := &secretPolicy{}
	for _, x := range c.Secrets {
		if err := checkSecret(x, p.list); err != nil {
			return err
		}
		v := x.Value
		if v == "" {
			v = os.Getenv(x.Name)
		}
		if v == "" {
			return &ConfigError{Field: "Secrets", Value: x.Name, Reason: "no value: the caller's variable " + x.Name + " is empty or unset"}
		}
		ph, err := egress.NewPlaceholder(v)
		if err != nil {
			return &SetupError{Layer: LayerEgress, Err: err}
		}
		p.list = append(p.list, egress.Secret{Name: x.Name, Value: v, Placeholder: ph, Domains: slices.Clone(x.Domains), Body: x.Body})
	}
	s.Secrets = p
	s.Egress.secrets = p
	return nil
}

// checkSecret refuses a secret without a valid name or domains, or named
// twice.
func checkSecret(x Secret, before []egress.Secret) error {
	switch {
	case !validEnvName(x.Name):
		return &ConfigError{Field: "Secrets", Value: x.Name, Reason: "want a variable name (letters, digits, _; not starting with a digit)"}
	case slices.ContainsFunc(before, func(b egress.Secret) bool { return b.Name == x.Name }):
		return &ConfigError{Field: "Secrets", Value: x.Name, Reason: "named twice"}
	case len(x.Domains) == 0:
		return &ConfigError{Field: "Secrets", Value: x.Name, Reason: "no domain to add it for"}
	}
	for _, d := range x.Domains {
		if _, err := egress.ParseRules([]string{d}, nil, nil); err != nil {
			return &ConfigError{Field: "Secrets", Value: x.Name + "@" + d, Reason: egressReason(err, d), Err: err}
		}
	}
	return nil
}

func validEnvName(n string) bool {
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		return false
	}
	for _, c := range n {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// prepare makes what New needs beyond the resolved secrets: the CA, the
// caller's roots, and the bundle file, in a directory of its own that
// commands see read-only.
func (p *secretPolicy) prepare(s *spec) error {
	ca, err := egress.NewCA()
	if err != nil {
		return &SetupError{Layer: LayerEgress, Err: err}
	}
	roots, err := egress.CallerRoots(nil)
	if err != nil {
		return &SetupError{Layer: LayerEgress, Err: err}
	}
	pool, err := egress.RootPool(roots)
	if err != nil {
		return &SetupError{Layer: LayerEgress, Err: fmt.Errorf("the caller's trust store: %w", err)}
	}
	dir, err := os.MkdirTemp("", "corral-ca-")
	if err != nil {
		return &SetupError{Layer: LayerEgress, Err: err}
	}
	bundle := filepath.Join(dir, "ca-bundle.pem")
	if err := os.Chmod(dir, 0o755); err == nil {
		err = os.WriteFile(bundle, ca.Bundle(roots), 0o644)
	}
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
		bundle = filepath.Join(dir, "ca-bundle.pem")
	}
	if err != nil {
		os.RemoveAll(dir)
		return &SetupError{Layer: LayerEgress, Path: dir, Err: err}
	}
	p.ca, p.roots, p.dir, p.bundle = ca, pool, dir, bundle
	// Shown read-only, wherever it lies: a private /tmp would hide it.
	s.ReadOnly = append(s.ReadOnly, dir)
	return nil
}

// cleanup removes the bundle's directory.
func (p *secretPolicy) cleanup() {
	if p != nil && p.dir != "" {
		os.RemoveAll(p.dir)
	}
}

// env gives env each secret's placeholder and points the CA-bundle
// variables at the bundle. A variable that holds a value (a bare Env
// entry copies the caller's) is dropped: the command never holds one.
func (p *secretPolicy) env(env []string) []string {
	if p == nil {
		return env
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		_, v, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(p.list, func(x egress.Secret) bool { return strings.Contains(v, x.Value) })
	})
	for _, x := range p.list {
		env = environ.Set(env, x.Name+"="+x.Placeholder)
	}
	if p.bundle != "" {
		for _, n := range caVars {
			env = environ.Set(env, n+"="+p.bundle)
		}
	}
	return env
}

// options are the proxy's SecretOptions; a placeholder seen going
// elsewhere is reported to refused as a network violation.
func (p *secretPolicy) options(refused func(Violation)) *egress.SecretOptions {
	if p == nil {
		return nil
	}
	return &egress.SecretOptions{
		Secrets: p.list, CA: p.ca, Roots: p.roots,
		OnExposure: func(e egress.Exposure) {
			refused(Violation{Kind: ViolationNetwork, Target: net.JoinHostPort(e.Host, strconv.Itoa(e.Port)),
				Rule: RulePlaceholder + e.Name + ", as it is: the value is added only for " + strings.Join(p.domains(e.Name), ", "), Count: 1})
		},
	}
}

func (p *secretPolicy) domains(name string) []string {
	for _, x := range p.list {
		if x.Name == name {
			return x.Domains
		}
	}
	return nil
}

// Secrets returns the sandbox's secrets with their placeholders, never
// their values: for a leak scanner that must tell a placeholder from a
// credential.
func (sb *Sandbox) Secrets() []SecretInfo {
	if sb.spec.Secrets == nil {
		return nil
	}
	var out []SecretInfo
	for _, x := range sb.spec.Secrets.list {
		out = append(out, SecretInfo{Name: x.Name, Domains: slices.Clone(x.Domains), Placeholder: x.Placeholder})
	}
	return out
}
