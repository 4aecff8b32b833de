package tools

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/corralhq/corral/internal/netrule"
	"github.com/stretchr/testify/require"
)

// fuzzDNS is FuzzURLChecker's DNS; any other name does not exist.
var fuzzDNS = map[string][]string{
	"public.test": {"93.184.216.34"},
	"evil.test":   {"127.0.0.1"},
	"mixed.test":  {"93.184.216.34", "10.0.0.1"},
	"meta.test":   {"::ffff:169.254.169.254"},
	"nat64.test":  {"64:ff9b::7f00:1"},
}

type tableResolver map[string][]string

func (m tableResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	as, ok := m[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, a := range as {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// FuzzURLChecker: a URL the checker passes is one whose host, however it
// is spelled, reaches only public addresses: read as the client that
// fetches it reads it (net/url), as an address literal in any form a
// browser takes, or through DNS.
func FuzzURLChecker(f *testing.F) {
	for _, s := range []string{
		"http://public.test/x", "https://EVIL.test./", "http://mixed.test:8080/", "http://127.1/", "http://0x7f.0.0.1/",
		"http://[::ffff:127.0.0.1]/", "http://[fe80::1%25eth0]/", "http://2130706433/", "http://metadata.google.internal/",
		"http://user:pw@public.test@evil.test/", "http://localhost./", "http://a.localhost/", "ftp://public.test/",
		" http://public.test/ ", "http://public.test\\@evil.test/", "http://nat64.test/", "http://[64:ff9b::a9fe:a9fe]/",
	} {
		f.Add(s)
	}
	c := &URLChecker{Resolver: tableResolver(fuzzDNS)}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := c.Check(context.Background(), raw)
		if err != nil {
			return
		}
		again, err := url.Parse(u.String())
		require.NoError(t, err, "%q passed, and its URL %q does not parse again", raw, u)
		for _, h := range []string{u.Hostname(), again.Hostname()} {
			host := strings.TrimSuffix(strings.ToLower(h), ".")
			require.False(t, host == "localhost" || strings.HasSuffix(host, ".localhost"), "%q passed", raw)
			for _, a := range reaches(host) {
				why, blocked := netrule.BlockedAddr(a)
				require.False(t, blocked, "%q passed, and reaches %s (%s)", raw, a, why)
			}
		}
	})
}

// reaches is every address host names: as a literal (with or without a
// zone, in a browser's shorthand forms) or in the fuzz DNS.
func reaches(host string) []netip.Addr {
	lit := host
	if i := strings.IndexByte(lit, '%'); i >= 0 {
		lit = lit[:i]
	}
	if a, err := netip.ParseAddr(lit); err == nil {
		return []netip.Addr{a}
	}
	if a, ok := netrule.ParseLegacyIPv4(host); ok {
		return []netip.Addr{a}
	}
	as, _ := tableResolver(fuzzDNS).LookupNetIP(context.Background(), "ip", host)
	return as
}
