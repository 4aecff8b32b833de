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
