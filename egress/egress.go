package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
)

// Rules is a parsed allowlist. The zero value allows nothing.
type Rules struct {
	// filled in by ParseRules
}

// ParseRules parses allowed and denied domain entries (an exact name or
// "*.example.com", each with an optional ":port") and allowed address
// ranges (CIDR, or a single address). Names are compared case-insensitively
// after IDNA normalisation; a denied entry wins over an allowed one; no
// allowed entry means nothing is allowed. A malformed entry is an error
// naming it.
func ParseRules(allowed, denied, allowedIPs []string) (*Rules, error) {
	return nil, errors.New("egress: not implemented")
}

// Refusal is one connection the proxy refused.
type Refusal struct {
	Host   string // the name or address the client asked for
	Port   int
	Reason string // why, in words a model can act on: "not in allowed domains"
	Via    string // "http" or "socks5"
}

// String is the line the client is answered with and the caller logs:
// "corral: blocked evil.example:443 (not in allowed domains)".
func (r Refusal) String() string { return "" }

// Options configures a Proxy.
type Options struct {
	Rules *Rules
	// Resolve looks up a name; nil uses net.DefaultResolver. Tests inject
	// a map of names to loopback addresses.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Upstream, when set, is a proxy that allowed connections are made
	// through (CONNECT chaining); FromEnvironment fills it from the
	// caller's HTTPS_PROXY/HTTP_PROXY.
	Upstream *url.URL
	// OnRefusal, when set, is called for every refused connection.
	OnRefusal func(Refusal)
}

// Proxy serves the HTTP and SOCKS5 proxies on listeners it is given.
type Proxy struct{}

// New returns a Proxy with the given options.
func New(o Options) (*Proxy, error) { return nil, errors.New("egress: not implemented") }

// SetRules replaces the rules; connections accepted from then on use them.
func (p *Proxy) SetRules(r *Rules) {}

// ServeHTTPProxy accepts HTTP proxy clients (CONNECT and absolute-form
// requests) on l until l is closed or the Proxy is.
func (p *Proxy) ServeHTTPProxy(l net.Listener) error { return errors.New("egress: not implemented") }

// ServeSOCKS5 accepts SOCKS5 clients (CONNECT, with names resolved by the
// proxy) on l until l is closed or the Proxy is.
func (p *Proxy) ServeSOCKS5(l net.Listener) error { return errors.New("egress: not implemented") }

// Close stops serving and closes every connection in flight.
func (p *Proxy) Close() error { return nil }
