package corral

import (
	"net/url"
	"strings"

	"github.com/corralhq/corral/internal/environ"
)

// passedEnv are the variables a command inherits from the caller by default.
// Besides the basics, the proxy and CA-bundle variables that let tools
// (curl, git, pip, npm, Go, Python's requests, Node) work behind a
// corporate proxy that inspects TLS.
var passedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TZ", "TMPDIR",
	// Proxies; a user:password in their URL is removed (see proxyEnv).
	"HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "ALL_PROXY", "NO_PROXY",
	"http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy",
	// Certificate authorities.
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
	"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "CURL_CA_BUNDLE", "PIP_CERT", "AWS_CA_BUNDLE",
	"CARGO_HTTP_CAINFO", "NPM_CONFIG_CAFILE", "npm_config_cafile",
}

// proxyEnv are the passed variables whose value is a proxy URL.
var proxyEnv = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "ftp_proxy", "all_proxy",
}

// secretMarkers are substrings of variable names never passed implicitly.
var secretMarkers = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"}

// defaultEnv builds the environment a command gets when Cmd.Env is nil: the
// allow-listed variables of the caller, then extra ("KEY=VALUE" sets, a bare
// "KEY" copies the caller's value).
func defaultEnv(caller, extra []string) []string {
	var env []string
	for _, kv := range caller {
		name, _, _ := strings.Cut(kv, "=")
		if implicitlyPassed(name) {
			env = append(env, withoutProxyCredentials(kv))
		}
	}
	for _, kv := range extra {
		if strings.Contains(kv, "=") {
			env = environ.Set(env, kv)
		} else if v, ok := lookup(caller, kv); ok {
			env = environ.Set(env, kv+"="+v)
		}
	}
	return env
}

// filterEnv applies the default environment's secret rules to an
// environment the caller set in Cmd.Env: a variable whose name looks
// secret is dropped, and a proxy URL loses its user:password, unless
// Config.Env names the variable (then it passes as given). Everything else
// in Cmd.Env passes: the caller chose it.
func (sb *Sandbox) filterEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case sb.spec.allowsEnv(name):
			out = append(out, kv)
		case looksSecret(name):
		default:
			out = append(out, withoutProxyCredentials(kv))
		}
	}
	return out
}

// allowsEnv reports whether Config.Env names the variable, bare or with a
// value.
func (s *spec) allowsEnv(name string) bool {
	for _, kv := range s.Env {
		if n, _, _ := strings.Cut(kv, "="); n == name {
			return true
		}
	}
	return false
}

func implicitlyPassed(name string) bool {
	if looksSecret(name) {
		return false
	}
	for _, p := range passedEnv {
		if name == p {
			return true
		}
	}
	return strings.HasPrefix(name, "LC_")
}

func looksSecret(name string) bool {
	upper := strings.ToUpper(name)
	for _, m := range secretMarkers {
		if strings.Contains(upper, m) {
			return true
		}
	}
	return false
}

// withoutProxyCredentials removes the user:password from a proxy
// variable's URL: the command may use the proxy, not the caller's account
// on it. A proxy that requires authentication then answers 407, which
// names the problem; Config.Env passes the variable whole.
func withoutProxyCredentials(kv string) string {
	name, value, _ := strings.Cut(kv, "=")
	isProxy := false
	for _, p := range proxyEnv {
		isProxy = isProxy || name == p
	}
	if !isProxy || !strings.Contains(value, "@") {
		return kv
	}
	u, err := url.Parse(value)
	if err != nil || u.Host == "" {
		// Not a URL with a scheme ("user:pw@proxy:3128"): try with one.
		if u, err = url.Parse("http://" + value); err != nil || u.User == nil {
			return name + "=" // unparseable but holding an '@': keep nothing
		}
		u.User = nil
		return name + "=" + strings.TrimPrefix(u.String(), "http://")
	}
	u.User = nil
	return name + "=" + u.String()
}

func lookup(env []string, name string) (string, bool) {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v, true
		}
	}
	return "", false
}
