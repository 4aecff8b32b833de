package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/corralhq/corral/internal/netrule"
)

// ErrBlockedURL is wrapped by every *URLError.
var ErrBlockedURL = errors.New("URL refused")

// URLError reports a URL a browsing tool must not fetch.
type URLError struct {
	URL    string
	Reason string
}

func (e *URLError) Error() string { return fmt.Sprintf("url %s: refused: %s", e.URL, e.Reason) }

func (e *URLError) Unwrap() error { return ErrBlockedURL }

// Resolver looks up the addresses of a host. *net.Resolver implements it;
// tests use a fake so they never query real DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// URLChecker decides whether a browsing tool may fetch a URL.
//
// Check resolves the host and refuses the URL when any of its addresses is
// blocked. That alone leaves a gap, DNS rebinding: the name is resolved
// again when the page is fetched, and a hostile DNS server can answer with a
// public address for the check and a private one for the fetch. Close it by
// fetching through a client whose dialer checks the address it actually
// connects to: [NewTransport] for net/http, or [DialControl] on any
// net.Dialer (for example in a proxy in front of a headless browser).
type URLChecker struct {
	// Resolver defaults to net.DefaultResolver.
	Resolver Resolver
}

// CheckURL is URLChecker{}.Check.
func CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	return (&URLChecker{}).Check(ctx, raw)
}

// Check parses raw and returns it when a browsing tool may fetch it: the
// scheme is http or https, the host is not a metadata service or a local
// name, and every address it resolves to is public (see BlockedAddr).
// A refusal is a *URLError; a lookup failure is an error as well, since an
// unchecked URL must not be fetched.
func (c *URLChecker) Check(ctx context.Context, raw string) (*url.URL, error) {
	u, host, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	if a, ok := netrule.LiteralAddr(host); ok {
		return u, checkAddr(raw, host, a)
	}
	addrs, err := c.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("url %s: resolve %s: %w", raw, host, err)
	}
	if len(addrs) == 0 {
		return nil, &URLError{URL: raw, Reason: fmt.Sprintf("%s has no addresses", host)}
	}
	for _, a := range addrs {
		if err := checkAddr(raw, host, a); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func (c *URLChecker) resolver() Resolver {
	if c.Resolver == nil {
		return net.DefaultResolver
	}
	return c.Resolver
}

// parseURL parses raw and returns it with its normalized host name.
func parseURL(raw string) (*url.URL, string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err == nil {
		// What the checker passes is written again (u.String()) by
		// whoever fetches it: a URL that does not read back the same
		// way (a zone of bytes net/url escapes but will not unescape)
		// is none.
		_, err = url.Parse(u.String())
	}
	if err != nil {
		return nil, "", &URLError{URL: raw, Reason: "not a valid URL"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", &URLError{URL: raw, Reason: fmt.Sprintf("scheme %q: only http and https are allowed", u.Scheme)}
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	switch {
	case host == "":
		return nil, "", &URLError{URL: raw, Reason: "no host"}
	case netrule.IsMetadataHost(host):
		return nil, "", &URLError{URL: raw, Reason: fmt.Sprintf("%s is a cloud metadata endpoint", host)}
	case netrule.IsLocalhost(host):
		return nil, "", &URLError{URL: raw, Reason: fmt.Sprintf("%s is loopback", host)}
	}
	return u, host, nil
}

func checkAddr(raw, host string, a netip.Addr) error {
	if why, blocked := BlockedAddr(a); blocked {
		if host == a.String() {
			return &URLError{URL: raw, Reason: fmt.Sprintf("%s is %s", a, why)}
		}
		return &URLError{URL: raw, Reason: fmt.Sprintf("%s resolves to %s, which is %s", host, a, why)}
	}
	return nil
}
