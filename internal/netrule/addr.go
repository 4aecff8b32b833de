// Package netrule is corral's one definition of the addresses and names that
// are not the public internet: loopback, private, link-local, carrier-grade
// NAT, cloud metadata services, the rest of IANA's special-purpose ranges,
// the addresses of this host's own interfaces, and the spellings that reach
// them (IPv6 forms embedding an IPv4 address, shorthand IPv4 literals,
// metadata host names).
// The browsing checks of package tools and the egress proxy both apply it,
// so the two cannot disagree on what is internal.
package netrule

import (
	"net/netip"
)

// blockedRange is a block of addresses that is not the public internet.
type blockedRange struct {
	prefix netip.Prefix
	what   string
}

// metadataAddrs are cloud instance metadata services: AWS, GCP and Azure
// (169.254.169.254), AWS over IPv6 (fd00:ec2::254) and Alibaba Cloud
// (100.100.100.200). They hand out credentials to anything on the instance
// that asks. Each also falls in a wider blocked range; listing them first
// gives the refusal a precise reason.
var metadataAddrs = []blockedRange{
	{netip.MustParsePrefix("169.254.169.254/32"), "a cloud metadata endpoint"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "a cloud metadata endpoint"},
	{netip.MustParsePrefix("100.100.100.200/32"), "a cloud metadata endpoint"},
}

// blockedRanges are addresses that are not the public internet: the
// ranges of IANA's IPv4 and IPv6 special-purpose address registries
// (loopback, private and unique-local networks, link-local, carrier-grade
// NAT, documentation, benchmarking, protocol assignments, Teredo, ORCHID,
// AS112, ...), multicast, and addresses that are not unicast destinations
// at all. A registry entry that is "globally reachable" (an anycast
// service, AS112's sinks) is refused all the same: no command has a use
// for it that an allowed range would not serve.
var blockedRanges = []blockedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (this network)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (shared address space)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("192.0.0.0/24"), "special-purpose (IETF protocol assignments)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "special-purpose (documentation, TEST-NET-1)"},
	{netip.MustParsePrefix("192.31.196.0/24"), "special-purpose (AS112)"},
	{netip.MustParsePrefix("192.52.193.0/24"), "special-purpose (AMT)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "special-purpose (6to4 relay anycast)"},
	{netip.MustParsePrefix("192.175.48.0/24"), "special-purpose (AS112 direct delegation)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "special-purpose (benchmarking)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "special-purpose (documentation, TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "special-purpose (documentation, TEST-NET-3)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("100::/64"), "special-purpose (discard-only)"},
	{netip.MustParsePrefix("100:0:0:1::/64"), "special-purpose (dummy prefix)"},
	{netip.MustParsePrefix("2001::/32"), "special-purpose (Teredo)"},
	{netip.MustParsePrefix("2001:db8::/32"), "special-purpose (documentation)"},
	{netip.MustParsePrefix("2001::/23"), "special-purpose (IETF protocol assignments)"},
	{netip.MustParsePrefix("2620:4f:8000::/48"), "special-purpose (AS112)"},
	{netip.MustParsePrefix("3fff::/20"), "special-purpose (documentation)"},
	{netip.MustParsePrefix("5f00::/16"), "special-purpose (segment routing)"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// embeddingRanges are IPv6 forms that carry an IPv4 address which the
// network delivers to: IPv4-mapped, IPv4-compatible, NAT64 and 6to4. An
// address in one of them is judged by the IPv4 address it carries.
var embeddingRanges = []struct {
	prefix netip.Prefix
	offset int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("::ffff:0:0/96"), 12},
	{netip.MustParsePrefix("::/96"), 12},
	{netip.MustParsePrefix("64:ff9b::/96"), 12},
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12},
	{netip.MustParsePrefix("2002::/16"), 2},
}

// BlockedAddr reports whether a is outside the public internet, so that a
// connection made on a model's behalf must not reach it, and why
// ("loopback", "private", "a cloud metadata endpoint", "an address of this
// host", ...): a special-purpose range, or an address of one of this
// host's interfaces as they are at the time of the call. An IPv6 address
// that carries an IPv4 one is judged by the IPv4 address.
func BlockedAddr(a netip.Addr) (string, bool) {
	if !a.IsValid() {
		return "not a valid address", true
	}
	a = a.WithZone("")
	if v4, ok := embeddedIPv4(a); ok {
		if why, blocked := BlockedAddr(v4); blocked {
			return why + " (embedded in " + a.String() + ")", true
		}
		return "", false
	}
	for _, list := range [][]blockedRange{metadataAddrs, blockedRanges} {
		for _, r := range list {
			if r.prefix.Contains(a) {
				return r.what, true
			}
		}
	}
	switch host, err := IsHostAddr(a); {
	case err != nil:
		return "maybe an address of this host, whose addresses cannot be read: " + err.Error(), true
	case host:
		return "an address of this host", true
	}
	return "", false
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries, if it is
// in one of the embedding forms.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() || a == netip.IPv6Unspecified() || a == netip.IPv6Loopback() {
		return netip.Addr{}, false
	}
	b := a.As16()
	for _, e := range embeddingRanges {
		if e.prefix.Contains(a) {
			return netip.AddrFrom4([4]byte(b[e.offset : e.offset+4])), true
		}
	}
	return netip.Addr{}, false
}

// IsMetadataAddr reports whether a is a cloud metadata endpoint, in any
// spelling that reaches it.
func IsMetadataAddr(a netip.Addr) bool {
	a = a.WithZone("")
	if v4, ok := embeddedIPv4(a); ok {
		a = v4
	}
	for _, r := range metadataAddrs {
		if r.prefix.Contains(a) {
			return true
		}
	}
	return false
}

// IsUnspecified reports whether a is in 0.0.0.0/8 or is ::, in any
// spelling: addresses that no host has, which a connection to reaches
// the local host on Linux.
func IsUnspecified(a netip.Addr) bool {
	a = a.WithZone("")
	if v4, ok := embeddedIPv4(a); ok {
		a = v4
	}
	return a.IsUnspecified() || a.Is4() && a.As4()[0] == 0
}
