package netrule

import (
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlockedAddrBoundaries(t *testing.T) {
	tests := []struct {
		addr    string
		blocked bool
	}{
		{"9.255.255.255", false},
		{"10.0.0.0", true},
		{"11.0.0.0", false},
		{"172.15.255.255", false},
		{"172.16.0.0", true},
		{"172.32.0.0", false},
		{"100.63.255.255", false},
		{"100.64.0.0", true},
		{"100.128.0.0", false},
		{"169.253.255.255", false},
		{"192.167.255.255", false},
		{"192.169.0.0", false},
		{"1.1.1.1", false},
		{"8.8.8.8", false},
		{"223.255.255.255", false},
		{"2001:4860:4860::8888", false},
		{"fbff:ffff::", false},
		{"fec0::1", true},
		{"::2", true},
		{"::ffff:8.8.8.8", false},
		{"2002:808:808::", false},
	}
	for _, tt := range tests {
		_, blocked := BlockedAddr(netip.MustParseAddr(tt.addr))
		assert.Equal(t, tt.blocked, blocked, tt.addr)
	}
	_, blocked := BlockedAddr(netip.Addr{})
	assert.True(t, blocked, "the zero Addr")
}

func TestParseLegacyIPv4(t *testing.T) {
	tests := []struct {
		host string
		want string // "" means not an IPv4 host
	}{
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"10.0.0.1.", "10.0.0.1"},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"256.1.1.1", ""},
		{"1.2.3.256", ""},
		{"1.2.65536", ""},
		{"1.2.3.4.5", ""},
		{"08", ""},
		{"0xg", ""},
		{"example.com", ""},
		{"1.2.3.a", ""},
		{"", ""},
		{"1..2", ""},
	}
	for _, tt := range tests {
		a, ok := ParseLegacyIPv4(tt.host)
		if tt.want == "" {
			assert.False(t, ok, "%q parsed as %v", tt.host, a)
			continue
		}
		require.True(t, ok, tt.host)
		assert.Equal(t, tt.want, a.String(), tt.host)
	}
}

func TestSpecialAddrs(t *testing.T) {
	for _, tt := range []struct {
		addr                  string
		metadata, unspecified bool
	}{
		{"169.254.169.254", true, false},
		{"::ffff:169.254.169.254", true, false},
		{"64:ff9b::a9fe:a9fe", true, false},
		{"fd00:ec2::254", true, false},
		{"100.100.100.200", true, false},
		{"169.254.169.253", false, false},
		{"0.0.0.0", false, true},
		{"0.255.1.2", false, true},
		{"::", false, true},
		{"::ffff:0.0.0.0", false, true},
		{"1.0.0.0", false, false},
		{"8.8.8.8", false, false},
	} {
		a := netip.MustParseAddr(tt.addr)
		assert.Equal(t, tt.metadata, IsMetadataAddr(a), tt.addr)
		assert.Equal(t, tt.unspecified, IsUnspecified(a), tt.addr)
	}
}

func TestNames(t *testing.T) {
	assert.True(t, IsMetadataHost("metadata.google.internal"))
	assert.False(t, IsMetadataHost("metadata.google.internal.example"))
	assert.True(t, IsLocalhost("localhost"))
	assert.True(t, IsLocalhost("a.localhost"))
	assert.False(t, IsLocalhost("notlocalhost"))
	a, ok := LiteralAddr("::1")
	assert.True(t, ok)
	assert.Equal(t, "::1", a.String())
	a, ok = LiteralAddr("0x7f.1")
	assert.True(t, ok)
	assert.Equal(t, "127.0.0.1", a.String())
	_, ok = LiteralAddr("example.com")
	assert.False(t, ok)
}

// Every range of IANA's special-purpose registries is refused, at both
// of its ends, and so is each IPv6 form carrying a refused IPv4 address;
// the addresses just outside are not.
func TestBlockedAddrSpecialPurpose(t *testing.T) {
	for _, tt := range []struct {
		addr    string
		blocked bool
	}{
		{"192.0.0.0", true},
		{"192.0.0.255", true},
		{"192.0.1.0", false},
		{"192.0.2.0", true},
		{"192.0.2.255", true},
		{"192.0.3.0", false},
		{"192.31.196.1", true},
		{"192.52.193.1", true},
		{"192.88.99.1", true},
		{"192.175.48.1", true},
		{"198.17.255.255", false},
		{"198.18.0.0", true},
		{"198.19.255.255", true},
		{"198.20.0.0", false},
		{"198.51.100.7", true},
		{"203.0.113.7", true},
		{"203.0.114.0", false},
		{"239.255.255.255", true},
		{"240.0.0.1", true},
		{"255.255.255.254", true},
		{"100::1", true},
		{"100:0:0:1::1", true},
		{"2001::1", true},
		{"2001:0:c000:201::", true},
		{"2001:2::1", true},
		{"2001:1ff:ffff::", true},
		{"2001:200::1", false},
		{"2001:db8::1", true},
		{"2001:db9::1", false},
		{"2002:c000:0201::", true},
		{"2002:7f00:1::", true},
		{"2620:4f:8000::1", true},
		{"3fff::1", true},
		{"3fff:fff::1", true},
		{"3fff:1000::", false},
		{"5f00::1", true},
		{"64:ff9b::c000:201", true},
		{"64:ff9b::7f00:1", true},
		{"64:ff9b::808:808", false},
		{"::ffff:198.18.0.1", true},
		{"::198.51.100.1", true},
		{"ff02::1", true},
	} {
		why, blocked := BlockedAddr(netip.MustParseAddr(tt.addr))
		assert.Equal(t, tt.blocked, blocked, "%s: %s", tt.addr, why)
	}
	why, _ := BlockedAddr(netip.MustParseAddr("2001::1"))
	assert.Equal(t, "special-purpose (Teredo)", why)
}

// An address of one of the host's interfaces is refused, in whatever
// range it is, as the interfaces are at the time of the check; the
// check refuses when they cannot be read.
func TestBlockedAddrHostAddrs(t *testing.T) {
	set := func(f func() ([]net.Addr, error)) { interfaceAddrs = f }
	t.Cleanup(func() { set(net.InterfaceAddrs) })
	public := netip.MustParseAddr("8.8.4.4")
	_, blocked := BlockedAddr(public)
	require.False(t, blocked, "the control: a public address")

	set(func() ([]net.Addr, error) {
		return []net.Addr{
			&net.IPNet{IP: net.ParseIP("8.8.4.4"), Mask: net.CIDRMask(24, 32)},
			&net.IPNet{IP: net.ParseIP("2606:4700::1111"), Mask: net.CIDRMask(64, 128)},
		}, nil
	})
	for _, a := range []string{"8.8.4.4", "::ffff:8.8.4.4", "64:ff9b::808:404", "2606:4700::1111", "2606:4700::1111%eth0"} {
		why, blocked := BlockedAddr(netip.MustParseAddr(a))
		assert.True(t, blocked, a)
		assert.Contains(t, why, "an address of this host", a)
	}
	_, blocked = BlockedAddr(netip.MustParseAddr("8.8.4.5"))
	assert.False(t, blocked, "another address of the interface's network is not the host's")

	set(func() ([]net.Addr, error) { return nil, errors.New("netlink: no") })
	why, blocked := BlockedAddr(public)
	assert.True(t, blocked)
	assert.Contains(t, why, "cannot be read: netlink: no")
}

// The real interfaces: each address of this host is refused.
func TestBlockedAddrReadsTheInterfaces(t *testing.T) {
	list, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, ia := range list {
		a, ok := netip.AddrFromSlice(ia.(*net.IPNet).IP)
		require.True(t, ok)
		host, err := IsHostAddr(a)
		require.NoError(t, err)
		assert.True(t, host, a.String())
		_, blocked := BlockedAddr(a)
		assert.True(t, blocked, a.String())
	}
}
