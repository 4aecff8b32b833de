package corral

import (
	"strings"
	"testing"

	"github.com/corralhq/corral/internal/ladder"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWithProxyEnvOverridesTheCallersProxies(t *testing.T) {
	env := withProxyEnv([]string{
		"PATH=/bin", "HTTP_PROXY=http://corp:3128", "https_proxy=http://corp:3128", "ALL_PROXY=socks5://corp:1080",
		"no_proxy=*", "FTP_PROXY=http://corp:21", "SSL_CERT_FILE=/etc/ca.pem",
	}, 1111, 2222, "")
	want := []string{
		"PATH=/bin", "SSL_CERT_FILE=/etc/ca.pem",
		"HTTP_PROXY=http://127.0.0.1:1111", "http_proxy=http://127.0.0.1:1111",
		"HTTPS_PROXY=http://127.0.0.1:1111", "https_proxy=http://127.0.0.1:1111",
		"ALL_PROXY=socks5h://127.0.0.1:2222", "all_proxy=socks5h://127.0.0.1:2222",
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
	}
	assert.ElementsMatch(t, want, env)
}

// A proxy on the host's loopback is named with its credential, as the
// password of a proxy URL's user information, which curl, git, pip, npm
// and Go's clients send as proxy authorization.
func TestWithProxyEnvCarriesTheCredential(t *testing.T) {
	env := withProxyEnv([]string{"PATH=/bin"}, 1111, 2222, "0123abcd")
	assert.Contains(t, env, "HTTP_PROXY=http://corral:0123abcd@127.0.0.1:1111")
	assert.Contains(t, env, "https_proxy=http://corral:0123abcd@127.0.0.1:1111")
	assert.Contains(t, env, "ALL_PROXY=socks5h://corral:0123abcd@127.0.0.1:2222")
	assert.Contains(t, env, "NO_PROXY=localhost,127.0.0.1,::1")
}

func TestNetworkListsNeedNetworkAllow(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		name  string
		cfg   Config
		field string
	}{
		{"allowed", Config{Workspace: ws, AllowedDomains: []string{"example.com"}}, "AllowedDomains"},
		{"denied", Config{Workspace: ws, Network: NetworkNone, DeniedDomains: []string{"example.com"}}, "DeniedDomains"},
		{"ips", Config{Workspace: ws, Network: NetworkHost, AllowedIPs: []string{"10.0.0.0/8"}}, "AllowedIPs"},
		{"connections", Config{Workspace: ws, Network: NetworkNone, ProxyConnections: 10}, "ProxyConnections"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.cfg.resolve()
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.field, ce.Field)
			assert.Contains(t, ce.Reason, `needs Network "allow"`)
		})
	}
}

func TestNetworkListErrorsNameFieldAndEntry(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		cfg          Config
		field, value string
	}{
		{Config{AllowedDomains: []string{"ok.example", "bad name"}}, "AllowedDomains", "bad name"},
		{Config{DeniedDomains: []string{"x.example:99999"}}, "DeniedDomains", "x.example:99999"},
		{Config{AllowedIPs: []string{"10.0.0.0/33"}}, "AllowedIPs", "10.0.0.0/33"},
	} {
		c.cfg.Workspace, c.cfg.Network = ws, NetworkAllow
		_, err := c.cfg.resolve()
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, c.value)
		assert.Equal(t, c.field, ce.Field)
		assert.Equal(t, c.value, ce.Value)
		assert.NotContains(t, ce.Reason, c.value, "the entry is named once")
		assert.NotContains(t, err.Error(), "\n")
	}
	s, err := Config{Workspace: ws, Network: NetworkAllow}.resolve()
	require.NoError(t, err, "no entry is valid: nothing is reachable")
	require.NotNil(t, s.Egress)
}

func TestProxyConnections(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		given, proxy, resolved int // Config, egress.Options.MaxConns, Resolved
	}{
		{0, DefaultProxyConnections, DefaultProxyConnections},
		{1, 1, 1},
		{5000, 5000, 5000},
		{NoLimit, -1, NoLimit},
	} {
		cfg := Config{Workspace: ws, Network: NetworkAllow, ProxyConnections: c.given}
		s, err := cfg.resolve()
		require.NoError(t, err, c.given)
		assert.Equal(t, c.proxy, s.Egress.maxConns, c.given)
		r, err := cfg.Resolved()
		require.NoError(t, err)
		assert.Equal(t, c.resolved, r.ProxyConnections, c.given)
	}
	_, err := Config{Workspace: ws, Network: NetworkAllow, ProxyConnections: -2}.resolve()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "ProxyConnections", ce.Field)
	assert.Equal(t, "-2", ce.Value)
}

func TestSetNetworkRules(t *testing.T) {
	ws := t.TempDir()
	s, err := Config{Workspace: ws, Network: NetworkAllow, AllowedDomains: []string{"a.example"}}.resolve()
	require.NoError(t, err)
	sb := &Sandbox{spec: s}
	require.NoError(t, sb.SetNetworkRules([]string{"b.example"}, []string{"c.b.example"}, nil))
	allowed, denied, _ := s.Egress.lists()
	assert.Equal(t, []string{"b.example"}, allowed)
	assert.Equal(t, []string{"c.b.example"}, denied)
	var ce *ConfigError
	require.ErrorAs(t, sb.SetNetworkRules([]string{"bad name"}, nil, nil), &ce)
	allowed, _, _ = s.Egress.lists()
	assert.Equal(t, []string{"b.example"}, allowed, "a bad list changes nothing")

	host, err := Config{Workspace: ws}.resolve()
	require.NoError(t, err)
	require.ErrorAs(t, (&Sandbox{spec: host}).SetNetworkRules([]string{"a.example"}, nil, nil), &ce)
}

func TestViolationLogCountsRepeatsAndLogsTheFirst(t *testing.T) {
	var lines []string
	sb := &Sandbox{logf: func(f string, a ...any) { lines = append(lines, f) }, spec: &spec{}}
	c := &Cmd{sb: sb}
	v := Violation{Kind: ViolationNetwork, Target: "evil.example:443", Rule: "not in allowed domains", Count: 1}
	c.recordViolation(v)
	c.recordViolation(v)
	c.recordViolation(Violation{Kind: ViolationNetwork, Target: "evil.example:80", Rule: "not in allowed domains"})
	got := c.Report()
	require.Len(t, got, 2)
	assert.Equal(t, 2, got[0].Count)
	assert.Equal(t, 1, got[1].Count)
	assert.Len(t, lines, 2)
	assert.Equal(t, "corral: blocked evil.example:443 (not in allowed domains); --allow-domain evil.example (allowed_domains) allows it", violationLine(v))
}

func TestNetworkEnforcementSaysWhatEachRungDoes(t *testing.T) {
	full := &ladder.Plan{Rung: RungFull, Landlock: true, Seccomp: true}
	bare := &ladder.Plan{Rung: RungLandlock, Landlock: true, Seccomp: true}
	bareNoSeccomp := &ladder.Plan{Rung: RungLandlock, Landlock: true}
	assert.Contains(t, networkEnforcement(NetworkAllow, full), "network namespace with only loopback")
	assert.Contains(t, networkEnforcement(NetworkAllow, bare), "to the proxy's address only")
	assert.NotContains(t, networkEnforcement(NetworkAllow, bare), "any address")
	assert.Contains(t, networkEnforcement(NetworkAllow, bareNoSeccomp), "Landlock allows TCP connect only to its two ports")
	assert.Contains(t, networkEnforcement(NetworkAllow, bareNoSeccomp), "any address on those ports")
	assert.Contains(t, networkEnforcement(NetworkAllow, bare), "seccomp refuses every IPv4 and IPv6 socket but TCP")
	assert.Contains(t, networkEnforcement(NetworkAllow, bareNoSeccomp), "NOT refused")
	assert.Contains(t, networkEnforcement(NetworkAllow, &ladder.Plan{Rung: RungNone}), "not enforced")
	assert.True(t, strings.HasPrefix(networkEnforcement(NetworkHost, full), "host"))
}
