package egress

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPBadRequests: what is not a proxy request gets a 400 naming the
// problem, and no refusal is recorded for it.
func TestHTTPBadRequests(t *testing.T) {
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, nil)})
	for _, tt := range []struct{ req, body string }{
		{"GET / HTTP/1.1\r\nHost: api.example\r\n\r\n", "corral: this is a proxy: ask for an absolute http:// URL, or CONNECT host:port"},
		{"GET ftp://api.example/ HTTP/1.1\r\nHost: api.example\r\n\r\n", "corral: this is a proxy: ask for an absolute http:// URL, or CONNECT host:port"},
		{"CONNECT api.example HTTP/1.1\r\nHost: api.example\r\n\r\n", `corral: CONNECT "api.example": want host:port`},
	} {
		c, err := net.Dial("tcp", p.httpAddr)
		require.NoError(t, err)
		fmt.Fprint(c, tt.req)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, tt.req)
		assert.Equal(t, tt.body, readBody(t, resp), tt.req)
		c.Close()
	}
	assert.Empty(t, p.refusals.all())
}

// TestPlainHTTPLiterals: plain requests to IP literals are refused
// outside the allowed ranges and forwarded inside them.
func TestPlainHTTPLiterals(t *testing.T) {
	srv := helloServer(t, false)
	pt := port(t, srv)
	for _, tt := range []struct {
		ips  []string
		code int
		body string
	}{
		{nil, 403, fmt.Sprintf("corral: blocked 127.0.0.1:%d (an IP address not in allowed IPs)", pt)},
		{[]string{"127.0.0.1/32"}, 200, fmt.Sprintf("hello from 127.0.0.1:%d/", pt)},
	} {
		p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, tt.ips)})
		code, body, err := get(p.httpClient(nil), fmt.Sprintf("http://127.0.0.1:%d/", pt))
		require.NoError(t, err)
		assert.Equal(t, tt.code, code)
		assert.Equal(t, tt.body, body)
	}
}

// TestIPv6Literal reaches a server on ::1 by its literal, through both
// sides, when ::1 is allowed, and is refused without.
func TestIPv6Literal(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback here:", err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); bufio.NewReader(c).WriteTo(c) }()
		}
	}()
	defer l.Close()
	target := l.Addr().String()
	allowed := startProxy(t, Options{Rules: mustRules(t, nil, nil, []string{"::1"})})
	c, status, _ := allowed.connect(t, target)
	require.NotNil(t, c, status)
	echoes(t, c)
	c.Close()
	c, err = allowed.socksDial(target)
	require.NoError(t, err)
	echoes(t, c)
	c.Close()

	refused := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, []string{"127.0.0.0/8"})})
	_, status, _ = refused.connect(t, target)
	assert.Equal(t, fmt.Sprintf("403 corral: blocked %s (an IP address not in allowed IPs)", target), status)
}

// TestCloseDuringLookup: Close does not wait for a lookup that never
// ends; it cancels it.
func TestCloseDuringLookup(t *testing.T) {
	started := make(chan struct{})
	hang := func(ctx context.Context, host string) ([]netip.Addr, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	p, err := New(Options{Rules: mustRules(t, []string{"slow.example"}, nil, nil), Resolve: hang})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- p.ServeSOCKS5(l) }()
	dialed := make(chan error, 1)
	go func() {
		r := &running{Proxy: p, socksAddr: l.Addr().String()}
		_, err := r.socksDial("slow.example:443")
		dialed <- err
	}()
	<-started
	require.NoError(t, p.Close())
	require.NoError(t, <-served)
	assert.Error(t, <-dialed)
}
