package netrule

import (
	"net/netip"
	"strconv"
	"strings"
)

// metadataHosts are names of cloud metadata services: inside a cloud
// instance they resolve to the metadata address, and elsewhere a search
// domain could make them resolve to anything.
var metadataHosts = []string{"metadata.google.internal", "metadata.aws.internal", "metadata"}

// IsMetadataHost reports whether host (lower case, no trailing dot) names a
// cloud metadata service.
func IsMetadataHost(host string) bool {
	for _, h := range metadataHosts {
		if host == h {
			return true
		}
	}
	return false
}

// IsLocalhost reports whether host (lower case, no trailing dot) is
// "localhost" or a name under it, which resolvers answer with loopback.
func IsLocalhost(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// LiteralAddr parses host as an IP address, including the shorthand IPv4
// forms browsers accept and a resolver may not ("127.1", "2130706433",
// "0x7f.0.0.1", "0177.0.0.1"), so that no spelling of an address skips a
// check made on addresses.
func LiteralAddr(host string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	return ParseLegacyIPv4(host)
}

// ParseLegacyIPv4 parses host the way the WHATWG URL standard parses an
// IPv4 host: one to four dot-separated numbers, each decimal, octal (a
// leading 0) or hex (0x); the last fills the remaining bytes.
func ParseLegacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Number(s string) (uint64, bool) {
	base := 10
	switch {
	case s == "":
		return 0, false
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	n, err := strconv.ParseUint(s, base, 32)
	return n, err == nil
}
