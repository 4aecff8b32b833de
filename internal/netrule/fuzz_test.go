package netrule

import (
	"math/big"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseLegacyIPv4 holds ParseLegacyIPv4 to the WHATWG URL standard's
// IPv4 parser, ported below with numbers of any size: where a browser
// reads an address, it reads the same one, and it reads none where a
// browser reads none.
func FuzzParseLegacyIPv4(f *testing.F) {
	for _, s := range []string{"127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1", "1.2.3.4.", "0x", "0x.0x.0", "4294967296", "1.0x100", "09", "1..2", "0XfF.1", "00000000000000000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		got, ok := ParseLegacyIPv4(host)
		want, wantOK := whatwgIPv4(host)
		require.Equal(t, wantOK, ok, "%q", host)
		if ok {
			require.Equal(t, want, got, "%q", host)
		}
	})
}

// whatwgIPv4 is the URL standard's IPv4 parser (url.spec.whatwg.org,
// "IPv4 parser").
func whatwgIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums []*big.Int
	for _, p := range parts {
		n, ok := whatwgNumber(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	b255 := big.NewInt(255)
	for _, n := range nums[:len(nums)-1] {
		if n.Cmp(b255) > 0 {
			return netip.Addr{}, false
		}
	}
	limit := new(big.Int).Exp(big.NewInt(256), big.NewInt(int64(5-len(nums))), nil)
	last := nums[len(nums)-1]
	if last.Cmp(limit) >= 0 {
		return netip.Addr{}, false
	}
	v := new(big.Int).Set(last)
	for i, n := range nums[:len(nums)-1] {
		v.Add(v, new(big.Int).Mul(n, new(big.Int).Exp(big.NewInt(256), big.NewInt(int64(3-i)), nil)))
	}
	u := v.Uint64()
	return netip.AddrFrom4([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}), true
}

// whatwgNumber is the standard's IPv4 number parser.
func whatwgNumber(s string) (*big.Int, bool) {
	if s == "" {
		return nil, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return big.NewInt(0), true
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF"[:min(base, 10)+max(0, base-10)*2], c) {
			return nil, false
		}
	}
	return new(big.Int).SetString(s, base)
}

// FuzzBlockedAddr: an IPv4 address is blocked exactly when each IPv6
// form that carries it is, and every address of a few ranges written out
// here from IANA's registries is blocked.
func FuzzBlockedAddr(f *testing.F) {
	for _, a := range []string{"127.0.0.1", "8.8.8.8", "169.254.169.254", "100.100.100.200", "10.1.2.3", "192.0.2.1", "0.1.2.3", "93.184.216.34"} {
		b := netip.MustParseAddr(a).As4()
		f.Add(b[:], uint16(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, tail uint16) {
		if len(b) < 4 {
			return
		}
		v4 := netip.AddrFrom4([4]byte(b[:4]))
		why, blocked := BlockedAddr(v4)
		if strings.Contains(why, "this host") {
			// Read from the interfaces at each call, which other
			// programs change meanwhile (or a read fails, and the
			// address is refused): not a fixed answer to compare.
			return
		}
		forms := map[string][16]byte{}
		put := func(name string, prefix []byte, at int) {
			var x [16]byte
			copy(x[:], prefix)
			copy(x[at:], v4.AsSlice())
			forms[name] = x
		}
		put("mapped", []byte{10: 0xff, 11: 0xff}, 12)
		put("NAT64", []byte{0, 0x64, 0xff, 0x9b}, 12)
		put("local NAT64", []byte{0, 0x64, 0xff, 0x9b, 0, 1, 6: byte(tail >> 8), 7: byte(tail)}, 12)
		put("6to4", []byte{0x20, 0x02, 14: byte(tail >> 8), 15: byte(tail)}, 2)
		if v4.As4()[0] != 0 && v4 != netip.AddrFrom4([4]byte{0, 0, 0, 1}) {
			put("compatible", nil, 12)
		}
		for name, x := range forms {
			a := netip.AddrFrom16(x)
			whyA, got := BlockedAddr(a)
			if strings.Contains(whyA, "this host") {
				continue
			}
			require.Equal(t, blocked, got, "%s, %s form of %s: %q, %q", a, name, v4, why, whyA)
			require.Equal(t, IsMetadataAddr(v4), IsMetadataAddr(a), "%s", a)
			require.Equal(t, IsUnspecified(v4), IsUnspecified(a), "%s", a)
		}
		for _, p := range []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/3"} {
			if netip.MustParsePrefix(p).Contains(v4) {
				require.True(t, blocked, "%s in %s", v4, p)
			}
		}
		if len(b) >= 16 {
			a := netip.AddrFrom16([16]byte(b[:16]))
			_, got := BlockedAddr(a)
			for _, p := range []string{"::1/128", "fc00::/7", "fe80::/10", "ff00::/8", "2001:db8::/32"} {
				if netip.MustParsePrefix(p).Contains(a) {
					require.True(t, got, "%s in %s", a, p)
				}
			}
		}
	})
}
