package egress

import (
	"errors"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"

	"github.com/corralhq/corral/internal/netrule"
)

// hostProfile maps a name the way a resolver lookup does (UTS #46,
// non-transitional, with case folding), but without the hyphen rule that
// would refuse real names such as "r3---sn-abc.googlevideo.com" and without
// STD3's ban on "_": asciiName checks the characters itself.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.CheckHyphens(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(true),
	idna.BidiRule(),
)

var errNotName = errors.New("not a valid host name")

// asciiName returns the form of a host name that rules are matched
// against and that is resolved: IDNA-mapped to ASCII, lower case, without
// a trailing dot. Both an allowlist entry and a client's name go through
// it, so "Bücher.Example." and "xn--bcher-kva.example" are one name.
func asciiName(s string) (string, error) {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", errNotName
	}
	a, err := hostProfile.ToASCII(s)
	if err != nil {
		return "", errNotName
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", errNotName
		}
	}
	return a, nil
}

// hostAddr parses host as an IP address literal: plain, bracketed IPv6,
// or one of the shorthand IPv4 forms a resolver would also accept
// ("127.1", "2130706433"). An IPv4-mapped IPv6 address is returned as the
// IPv4 address it maps.
func hostAddr(host string) (netip.Addr, bool) {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	a, ok := netrule.LiteralAddr(host)
	if !ok {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// printable returns s fit for a one-line message: ASCII, no control
// characters, at most 255 bytes. A client's host that is not a valid
// name must not be able to add lines to a response or a log.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 255 {
			b.WriteString("...")
			break
		}
		if r < 0x21 || r > 0x7e {
			b.WriteString("?")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
