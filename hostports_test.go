package corral

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseHostPort(t *testing.T) {
	for in, want := range map[string]int{"11434": 11434, "5432/tcp": 5432, "80/TCP": 80} {
		got, err := ParseHostPort(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for in, want := range map[string]string{
		"53/udp":  "UDP is not forwarded: host ports carry TCP only",
		"0":       "want a port from 1 to 65535",
		"65536":   "want a port from 1 to 65535",
		"x":       "want a port from 1 to 65535",
		"80/sctp": `protocol "sctp": want tcp`,
	} {
		_, err := ParseHostPort(in)
		require.Error(t, err, in)
		assert.Equal(t, want, err.Error(), in)
	}
}

func TestParsePublish(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	for in, want := range map[string]published{
		"3000":            {netip.AddrPortFrom(lo, 3000), 3000},
		"8080:80":         {netip.AddrPortFrom(lo, 8080), 80},
		"127.0.0.2:8080":  {netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), 8080), 8080},
		"0.0.0.0:8080:80": {netip.AddrPortFrom(netip.IPv4Unspecified(), 8080), 80},
		"[::1]:8080":      {netip.AddrPortFrom(netip.IPv6Loopback(), 8080), 8080},
		"[::1]:8080:80":   {netip.AddrPortFrom(netip.IPv6Loopback(), 8080), 80},
	} {
		got, err := parsePublish(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "x", "80:x", "1.2.3:80", "[::1]80", "host:80:81", "1:2:3:4", "0"} {
		_, err := parsePublish(in)
		assert.Error(t, err, in)
	}
}

func TestHostNetConfig(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Workspace: ws, HostPorts: []int{80}}, `needs Network "none" or "allow"`},
		{Config{Workspace: ws, Publish: []string{"80"}}, `needs Network "none" or "allow"`},
		{Config{Workspace: ws, Network: NetworkNone, HostPorts: []int{0}}, "want a port from 1 to 65535"},
		{Config{Workspace: ws, Network: NetworkNone, Publish: []string{"0.0.0.0:80"}}, "is not loopback"},
		{Config{Workspace: ws, Network: NetworkNone, Publish: []string{"80", "127.0.0.1:80:81"}}, "published twice"},
		{Config{Workspace: ws, Network: NetworkNone, HostPorts: []int{80}, Publish: []string{"8080:80"}}, "is a host port"},
	} {
		_, err := c.cfg.resolve()
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, "%+v", c.cfg)
		assert.Contains(t, err.Error(), c.want)
	}
	s, err := Config{Workspace: ws, Network: NetworkAllow, HostPorts: []int{80, 80}, Publish: []string{"0.0.0.0:80:81"}, PublishAny: true}.resolve()
	require.NoError(t, err)
	assert.Equal(t, []uint16{80}, s.HostPorts)
}

func TestHostPortAllows(t *testing.T) {
	for target, want := range map[string]string{
		"127.0.0.1:5432":  "--allow-host-port 5432 (host_ports)",
		"[::1]:5432":      "--allow-host-port 5432 (host_ports)",
		"localhost:11434": "--allow-host-port 11434 (host_ports)",
		"10.0.0.1:5432":   "",
	} {
		v := Violation{Kind: ViolationNetwork, Target: target, Rule: RuleHostPort}
		assert.Equal(t, want, v.Allows(), target)
	}
}
