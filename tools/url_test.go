package tools

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeResolver answers from a table, so no test queries real DNS. A host
// missing from the table fails the test.
type fakeResolver struct {
	t     *testing.T
	hosts map[string][]string
}

func (f fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	addrs, ok := f.hosts[host]
	if !ok {
		f.t.Errorf("unexpected lookup of %q", host)
		return nil, errors.New("no such host")
	}
	if addrs == nil {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func TestCheckURL(t *testing.T) {
	c := &URLChecker{Resolver: fakeResolver{t: t, hosts: map[string][]string{
		"example.com":       {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
		"internal.corp":     {"10.1.2.3"},
		"mixed.example":     {"93.184.215.14", "192.168.1.1"},
		"rebind.example":    {"127.0.0.1"},
		"cgnat.example":     {"100.64.0.1"},
		"v6local.example":   {"fd12::1"},
		"mapped.example":    {"::ffff:169.254.169.254"},
		"empty.example":     {},
		"nxdomain.example":  nil,
		"xn--bcher-kva.com": {"93.184.215.14"},
	}}}
	tests := []struct {
		url     string
		blocked string // substring of the refusal; "" means allowed
	}{
		{"https://example.com/page?q=1", ""},
		{"http://EXAMPLE.com./", ""},
		{"HTTPS://example.com", ""},
		{"http://93.184.215.14/", ""},
		{"http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/", ""},
		{"http://[::ffff:93.184.215.14]/", ""},
		{"https://xn--bcher-kva.com/", ""},

		{"ftp://example.com/", `scheme "ftp"`},
		{"file:///etc/passwd", `scheme "file"`},
		{"javascript:alert(1)", `scheme "javascript"`},
		{"gopher://example.com", `scheme "gopher"`},
		{"example.com", `scheme ""`},
		{"http:///path", "no host"},
		{"http://%zz/", "not a valid URL"},

		{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"http://metadata.google.internal/computeMetadata/v1/", "cloud metadata"},
		{"http://METADATA.GOOGLE.INTERNAL./", "cloud metadata"},
		{"http://metadata.aws.internal/", "cloud metadata"},
		{"http://metadata/", "cloud metadata"},
		{"http://[fd00:ec2::254]/", "cloud metadata"},
		{"http://100.100.100.200/", "cloud metadata"},
		{"http://[::ffff:169.254.169.254]/", "cloud metadata"},
		{"http://mapped.example/", "cloud metadata"},

		{"http://127.0.0.1:8080/", "loopback"},
		{"http://127.1/", "loopback"},
		{"http://2130706433/", "loopback"},
		{"http://0x7f000001/", "loopback"},
		{"http://0177.0.0.1/", "loopback"},
		{"http://%31%32%37.0.0.1/", "not a valid URL"},
		{"http://localhost/", "loopback"},
		{"http://api.localhost./", "loopback"},
		{"http://[::1]/", "loopback"},
		{"http://[::ffff:127.0.0.1]/", "loopback"},
		{"http://[::127.0.0.1]/", "loopback"},
		{"http://[64:ff9b::127.0.0.1]/", "loopback"},
		{"http://[2002:7f00:1::]/", "loopback"},
		{"http://rebind.example/", "rebind.example resolves to 127.0.0.1, which is loopback"},

		{"http://10.0.0.1/", "private"},
		{"http://172.16.5.4/", "private"},
		{"http://172.31.255.255/", "private"},
		{"http://192.168.0.1/", "private"},
		{"http://internal.corp/", "private"},
		{"http://mixed.example/", "private"},
		{"http://user:pw@192.168.0.1/", "private"},
		{"http://example.com@192.168.0.1/", "private"},

		{"http://169.254.1.1/", "link-local"},
		{"http://[fe80::1]/", "link-local"},
		{"http://[fe80::1%25eth0]/", "link-local"},
		{"http://100.64.0.1/", "carrier-grade NAT"},
		{"http://100.127.255.255/", "carrier-grade NAT"},
		{"http://cgnat.example/", "carrier-grade NAT"},
		{"http://255.255.255.255/", "broadcast"},
		{"http://0.0.0.0/", "unspecified"},
		{"http://0/", "unspecified"},
		{"http://[::]/", "unspecified"},
		{"http://[fc00::1]/", "unique-local"},
		{"http://v6local.example/", "unique-local"},
		{"http://224.0.0.1/", "multicast"},
		{"http://[ff02::1]/", "multicast"},
		{"http://empty.example/", "has no addresses"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			u, err := c.Check(context.Background(), tt.url)
			if tt.blocked == "" {
				require.NoError(t, err)
				assert.NotNil(t, u)
				return
			}
			require.ErrorIs(t, err, ErrBlockedURL)
			var ue *URLError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tt.blocked)
			assert.Contains(t, err.Error(), "url "+tt.url+": refused")
		})
	}
}

func TestCheckURLLookupFailure(t *testing.T) {
	c := &URLChecker{Resolver: fakeResolver{t: t, hosts: map[string][]string{"nxdomain.example": nil}}}
	_, err := c.Check(context.Background(), "http://nxdomain.example/")
	require.Error(t, err, "a URL whose host cannot be resolved is not fetched unchecked")
	assert.Contains(t, err.Error(), "resolve nxdomain.example")
}
