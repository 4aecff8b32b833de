package egress

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRulesErrors(t *testing.T) {
	tests := []struct {
		allowed, denied, ips []string
		want                 string
	}{
		{allowed: []string{""}, want: `egress: allowed domain "": empty entry`},
		{allowed: []string{"ok.example", "bad..example"}, want: `egress: allowed domain "bad..example": not a valid host name`},
		{allowed: []string{"a b.example"}, want: `allowed domain "a b.example": not a valid host name`},
		{allowed: []string{"*"}, want: `allowed domain "*": a wildcard must be the whole first label`},
		{allowed: []string{"*example.com"}, want: `a wildcard must be the whole first label`},
		{allowed: []string{"a.*.example.com"}, want: `a wildcard must be the whole first label`},
		{allowed: []string{"**.example.com"}, want: `a wildcard must be the whole first label`},
		{allowed: []string{"example.com:0"}, want: `port "0": want a number from 1 to 65535`},
		{allowed: []string{"example.com:65536"}, want: `port "65536"`},
		{allowed: []string{"example.com:+443"}, want: `port "+443"`},
		{allowed: []string{"example.com:"}, want: `port ""`},
		{allowed: []string{"example.com:https"}, want: `port "https"`},
		{allowed: []string{"10.0.0.1"}, want: `allowed domain "10.0.0.1": an IP address, not a name: give its range as an allowed IP`},
		{allowed: []string{"127.1:80"}, want: `an IP address, not a name`},
		{allowed: []string{"[::1]:443"}, want: `an IP address, not a name`},
		{allowed: []string{"::1"}, want: `an IP address, not a name`},
		{allowed: []string{"exa/mple.com"}, want: `not a valid host name`},
		{allowed: []string{"xn--zz.example"}, want: `not a valid host name`},
		{denied: []string{"*.exa mple.com"}, want: `egress: denied domain "*.exa mple.com": not a valid host name`},
		{ips: []string{"10.0.0.0/33"}, want: `egress: allowed IP "10.0.0.0/33": want a CIDR range (10.0.0.0/8) or an address`},
		{ips: []string{"example.com"}, want: `allowed IP "example.com"`},
		{ips: []string{"fe80::1%eth0"}, want: `allowed IP "fe80::1%eth0"`},
		{ips: []string{"::ffff:0:0/80"}, want: `an IPv4-mapped range shorter than /96`},
	}
	for _, tt := range tests {
		_, err := ParseRules(tt.allowed, tt.denied, tt.ips)
		require.Error(t, err, "%v %v %v", tt.allowed, tt.denied, tt.ips)
		assert.Contains(t, err.Error(), tt.want)
	}
}

func TestRulesCheckName(t *testing.T) {
	r := mustRules(t,
		[]string{"api.example", "*.ok.example", "Git.Example:22", "*.port.example:8443", "bücher.example", "under_score.example", "trailing.example."},
		[]string{"bad.ok.example", "*.worse.ok.example", "api.example:8080"},
		nil)
	tests := []struct {
		host string
		port int
		want string
	}{
		{"api.example", 443, ""},
		{"API.EXAMPLE", 443, ""},
		{"api.example.", 443, ""},
		{"x.api.example", 443, reasonNotAllowed},
		{"api.example", 8080, reasonDenied},
		{"a.ok.example", 443, ""},
		{"a.b.c.ok.example", 1, ""},
		{"ok.example", 443, reasonNotAllowed}, // a wildcard does not cover its base
		{"nok.example", 443, reasonNotAllowed},
		{"a.nok.example", 443, reasonNotAllowed},
		{"bad.ok.example", 443, reasonDenied},
		{"x.bad.ok.example", 443, ""}, // an exact denial covers that name only
		{"worse.ok.example", 443, ""},
		{"x.worse.ok.example", 443, reasonDenied},
		{"git.example", 22, ""},
		{"git.example", 443, reasonNotAllowed},
		{"a.port.example", 8443, ""},
		{"a.port.example", 443, reasonNotAllowed},
		{"Bücher.Example", 443, ""},
		{"BÜCHER.example", 443, ""},
		{"xn--bcher-kva.example", 443, ""},
		{"XN--BCHER-KVA.EXAMPLE", 443, ""},
		{"bucher.example", 443, reasonNotAllowed},
		{"ｂücher.example", 443, ""}, // fullwidth b maps to b
		{"under_score.example", 443, ""},
		{"trailing.example", 443, ""},
		{"api.example\n", 443, reasonNotName},
		{"api.example/x", 443, reasonNotName},
		{"", 443, reasonNotName},
		{"api.example", 0, reasonBadPort},
		{"api.example", 65536, reasonBadPort},
	}
	for _, tt := range tests {
		_, ref := r.authorize(tt.host, tt.port, "http")
		got := ""
		if ref != nil {
			got = ref.Reason
		}
		assert.Equal(t, tt.want, got, "%q:%d", tt.host, tt.port)
	}
}

func TestRulesNothingAllowed(t *testing.T) {
	for _, r := range []*Rules{nil, {}, mustRules(t, nil, nil, nil), mustRules(t, nil, []string{"x.example"}, nil)} {
		_, ref := r.authorize("api.example", 443, "http")
		require.NotNil(t, ref)
		assert.Equal(t, reasonNotAllowed, ref.Reason)
		_, ref = r.authorize("8.8.8.8", 443, "http")
		require.NotNil(t, ref)
		assert.Equal(t, reasonIPLiteral, ref.Reason)
	}
}

func TestRulesAddresses(t *testing.T) {
	r := mustRules(t, []string{"api.example"}, nil, []string{"10.1.0.0/16", "192.0.2.7", "::ffff:172.16.0.0/108", "fd00::/8"})
	literals := []struct {
		host string
		ok   bool
	}{
		{"10.1.2.3", true},
		{"10.2.0.1", false},
		{"192.0.2.7", true},
		{"192.0.2.8", false},
		{"172.16.5.5", true},
		{"::ffff:10.1.2.3", true}, // a mapped address is the IPv4 one
		{"[::ffff:10.1.2.3]", true},
		{"fd00::1", true},
		{"[fd00::1]", true},
		{"fe80::1", false},
		{"8.8.8.8", false}, // public, but an IP literal all the same
		{"0x0a.1.2.3", true},
		{"167838211", true}, // 10.1.2.3 as one number
		{"2130706433", false},
		{"127.1", false},
		{"fd00::1%eth0", false},
		{"0.0.0.0", false},
	}
	for _, tt := range literals {
		tg, ref := r.authorize(tt.host, 443, "socks5")
		assert.Equal(t, tt.ok, ref == nil, tt.host)
		if ref != nil {
			assert.Equal(t, reasonIPLiteral, ref.Reason, tt.host)
		} else {
			assert.Empty(t, tg.name, "a literal is dialled, not resolved")
		}
	}

	dialled := []struct {
		addr string
		why  string
	}{
		{"8.8.8.8", ""},
		{"2001:4860:4860::8888", ""},
		{"10.1.2.3", ""},
		{"10.2.0.1", "private and not in allowed IPs"},
		{"127.0.0.1", "loopback and not in allowed IPs"},
		{"169.254.169.254", "a cloud metadata endpoint and not in allowed IPs"},
		{"100.100.100.200", "a cloud metadata endpoint and not in allowed IPs"},
		{"100.64.0.1", "carrier-grade NAT (shared address space) and not in allowed IPs"},
		{"fd00:ec2::254", "a cloud metadata endpoint and not in allowed IPs"}, // a metadata address must be listed itself
		{"fd00::1", ""},
		{"fe80::1", "link-local and not in allowed IPs"},
		{"::ffff:127.0.0.1", "loopback and not in allowed IPs"},
		{"64:ff9b::a9fe:a9fe", "a cloud metadata endpoint (embedded in 64:ff9b::a9fe:a9fe) and not in allowed IPs"},
	}
	for _, tt := range dialled {
		assert.Equal(t, tt.why, r.checkAddr(netip.MustParseAddr(tt.addr).Unmap()), tt.addr)
	}
}

func TestRefusalString(t *testing.T) {
	assert.Equal(t, "corral: blocked evil.example:443 (not in allowed domains)",
		Refusal{Host: "evil.example", Port: 443, Reason: "not in allowed domains", Via: "http"}.String())
	assert.Equal(t, "corral: blocked [::1]:22 (an IP address not in allowed IPs)",
		Refusal{Host: "::1", Port: 22, Reason: "an IP address not in allowed IPs"}.String())
	// A host that is not a name cannot add a line.
	_, ref := (*Rules)(nil).authorize("evil.example\r\nX-Injected: 1", 80, "http")
	require.NotNil(t, ref)
	assert.NotContains(t, ref.String(), "\n")
	assert.NotContains(t, ref.String(), "\r")
}

func TestRulesSpecialAddresses(t *testing.T) {
	wide := mustRules(t, nil, nil, []string{"0.0.0.0/0", "::/0"})
	for _, a := range []string{"0.0.0.0", "0.1.2.3", "::", "::ffff:0.0.0.0", "169.254.169.254", "100.100.100.200", "fd00:ec2::254", "64:ff9b::a9fe:a9fe"} {
		assert.NotEmpty(t, wide.checkAddr(netip.MustParseAddr(a).Unmap()), "%s is not allowed by a wide range", a)
	}
	assert.Empty(t, wide.checkAddr(netip.MustParseAddr("10.0.0.1")), "control: the wide range allows others")
	exact := mustRules(t, nil, nil, []string{"169.254.169.254", "fd00:ec2::254/128"})
	for _, a := range []string{"169.254.169.254", "fd00:ec2::254"} {
		assert.Empty(t, exact.checkAddr(netip.MustParseAddr(a)), "%s listed itself", a)
	}
	assert.NotEmpty(t, exact.checkAddr(netip.MustParseAddr("0.0.0.0")))
}
