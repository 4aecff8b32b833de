package netrule

import (
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
