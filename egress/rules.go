package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/corralhq/corral/internal/netrule"
)

// Rules is a parsed allowlist. The zero value, and a nil *Rules, allow
// nothing. A Rules is never changed once parsed, so one may be shared by
// any number of proxies and goroutines.
type Rules struct {
	allowed []domainRule
	denied  []domainRule
	ips     []netip.Prefix
	// learning allows every name and range (see Learning).
	learning bool
}

// domainRule is one parsed domain entry.
type domainRule struct {
	name     string // ASCII, lower case; for a wildcard, the part after "*."
	wildcard bool   // matches names strictly under name, never name itself
	port     int    // 0 matches every port
}

// ParseRules parses allowed and denied domain entries (an exact name or
// "*.example.com", each with an optional ":port") and allowed address
// ranges (CIDR, or a single address). Names are compared case-insensitively
// after IDNA normalisation; a denied entry wins over an allowed one; no
// allowed entry means nothing is allowed. A malformed entry is an error
// naming it.
//
// "*.example.com" matches every name under example.com, at any depth
// ("a.example.com", "a.b.example.com"), and not example.com itself: list
// both to allow both. An entry without a port matches every port. An IP
// address is not a domain entry: give its range in allowedIPs.
func ParseRules(allowed, denied, allowedIPs []string) (*Rules, error) {
	r := &Rules{}
	var err error
	if r.allowed, err = parseDomains("allowed domain", allowed); err != nil {
		return nil, err
	}
	if r.denied, err = parseDomains("denied domain", denied); err != nil {
		return nil, err
	}
	for _, s := range allowedIPs {
		p, err := parsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("egress: allowed IP %q: %w", s, err)
		}
		r.ips = append(r.ips, p)
	}
	return r, nil
}

func parseDomains(what string, entries []string) ([]domainRule, error) {
	var out []domainRule
	for _, s := range entries {
		d, err := parseDomain(s)
		if err != nil {
			return nil, fmt.Errorf("egress: %s %q: %w", what, s, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// parseDomain parses "name", "*.name", "name:port" or "*.name:port".
func parseDomain(s string) (domainRule, error) {
	var d domainRule
	host := strings.TrimSpace(s)
	if host == "" {
		return d, fmt.Errorf("empty entry")
	}
	if strings.HasPrefix(host, "[") {
		return d, fmt.Errorf("an IP address, not a name: give its range as an allowed IP")
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		port, err := parsePort(host[i+1:])
		if err != nil {
			return d, err
		}
		host, d.port = host[:i], port
	}
	if strings.Contains(host, ":") {
		return d, fmt.Errorf("an IP address, not a name: give its range as an allowed IP")
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host, d.wildcard = rest, true
	}
	if strings.Contains(host, "*") {
		return d, fmt.Errorf(`a wildcard must be the whole first label, as in "*.example.com"`)
	}
	if _, ok := netrule.LiteralAddr(strings.TrimSuffix(host, ".")); ok && !d.wildcard {
		return d, fmt.Errorf("an IP address, not a name: give its range as an allowed IP")
	}
	name, err := asciiName(host)
	if err != nil {
		return d, err
	}
	d.name = name
	return d, nil
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("port %q: want a number from 1 to 65535", s)
	}
	return n, nil
}

// parsePrefix parses a CIDR range or a single address (a /32 or /128).
// An IPv4-mapped IPv6 form is taken as the IPv4 range it maps, since the
// addresses it is compared with are unmapped.
func parsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("want a CIDR range (10.0.0.0/8) or an address")
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("want a CIDR range (10.0.0.0/8) or an address")
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, fmt.Errorf("an IPv4-mapped range shorter than /96")
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// match reports whether d covers name (ASCII, lower case) on port.
func (d domainRule) match(name string, port int) bool {
	if d.port != 0 && d.port != port {
		return false
	}
	if !d.wildcard {
		return name == d.name
	}
	return len(name) > len(d.name) && strings.HasSuffix(name, d.name) && name[len(name)-len(d.name)-1] == '.'
}

func matchAny(rules []domainRule, name string, port int) bool {
	for _, d := range rules {
		if d.match(name, port) {
			return true
		}
	}
	return false
}

// Reasons a destination is refused, in the words the client is answered
// with.
const (
	reasonNotAllowed = "not in allowed domains"
	reasonDenied     = "in denied domains"
	reasonIPLiteral  = "an IP address not in allowed IPs"
	reasonNotName    = "not a valid host name"
	reasonBadPort    = "not a valid port"
)

// checkName returns why name (ASCII, lower case) on port is refused, or
// "" when the rules allow it. A denied entry wins.
func (r *Rules) checkName(name string, port int) string {
	switch {
	case r == nil:
		return reasonNotAllowed
	case matchAny(r.denied, name, port):
		return reasonDenied
	case !r.learning && !matchAny(r.allowed, name, port):
		return reasonNotAllowed
	}
	return ""
}

// inAllowedIPs reports whether a (unmapped) is in an allowed range. A
// cloud metadata endpoint must be listed as a single address, not merely
// fall in a wider range (100.64.0.0/10 for a VPN would otherwise open
// 100.100.100.200), and an unspecified address (0.0.0.0, which reaches
// the local host) never is.
func (r *Rules) inAllowedIPs(a netip.Addr) bool {
	if r == nil || netrule.IsUnspecified(a) {
		return false
	}
	exact := netrule.IsMetadataAddr(a)
	if r.learning && !exact {
		return true
	}
	for _, p := range r.ips {
		if p.Contains(a) && (!exact || p.Bits() == a.BitLen()) {
			return true
		}
	}
	return false
}

// checkAddr returns why a connection to a, an address the proxy is about
// to dial, is refused, or "" when it may be made: an address in an
// allowed range always may; any other must be on the public internet.
func (r *Rules) checkAddr(a netip.Addr) string {
	if r.inAllowedIPs(a) {
		return ""
	}
	if why, blocked := netrule.BlockedAddr(a); blocked {
		return why + " and not in allowed IPs"
	}
	return ""
}
