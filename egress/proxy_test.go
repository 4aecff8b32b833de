package egress

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// world is the test network: names the injected resolver knows, all on
// loopback, and the servers behind them.
type world struct {
	resolver      mapResolver
	plain, secure int // ports of an HTTP and an HTTPS server on 127.0.0.1
	echo          int // port of a TCP echo server on 127.0.0.1
}

func newWorld(t *testing.T) *world {
	plain, secure := helloServer(t, false), helloServer(t, true)
	return &world{
		resolver: mapResolver{
			"api.example":           {"127.0.0.1"},
			"a.ok.example":          {"127.0.0.1"},
			"deep.a.ok.example":     {"127.0.0.1"},
			"ok.example":            {"127.0.0.1"},
			"bad.ok.example":        {"127.0.0.1"},
			"evil.example":          {"127.0.0.1"},
			"xn--bcher-kva.example": {"127.0.0.1"},
			"meta.example":          {"169.254.169.254"},
			"rebind.example":        {"127.0.0.2"},
			"mixed.example":         {"10.1.2.3", "127.0.0.1"},
		},
		plain: port(t, plain), secure: port(t, secure), echo: echoServer(t),
	}
}

// TestHTTPSThroughCONNECT fetches a page over TLS from an allowed name
// through CONNECT; the control fetches it directly.
func TestHTTPSThroughCONNECT(t *testing.T) {
	srv := helloServer(t, true)
	w := newWorld(t)
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, loopback), Resolve: w.resolver.resolve})

	direct := srv.Client()
	code, _, err := get(direct, srv.URL+"/direct")
	require.NoError(t, err, "control: the server is reachable directly")
	assert.Equal(t, 200, code)

	code, body, err := get(p.httpClient(srv), fmt.Sprintf("https://api.example:%d/x", port(t, srv)))
	require.NoError(t, err)
	assert.Equal(t, 200, code)
	assert.Equal(t, fmt.Sprintf("hello from api.example:%d/x", port(t, srv)), body)
	assert.Empty(t, p.refusals.all())
}

// TestPlainHTTPKeepAlive sends several requests on one connection to the
// proxy, each checked on its own: allowed, refused, allowed again.
func TestPlainHTTPKeepAlive(t *testing.T) {
	w := newWorld(t)
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example", "ok.example"}, nil, loopback), Resolve: w.resolver.resolve})
	c, err := net.Dial("tcp", p.httpAddr)
	require.NoError(t, err)
	defer c.Close()
	br := newReader(c)
	for i, tt := range []struct {
		host string
		code int
		body string
	}{
		{"api.example", 200, "hello from api.example:%d/one"},
		{"evil.example", 403, "corral: blocked evil.example:%d (not in allowed domains)"},
		{"ok.example", 200, "hello from ok.example:%d/one"},
		{"api.example", 200, "hello from api.example:%d/one"},
	} {
		u := fmt.Sprintf("http://%s:%d/one", tt.host, w.plain)
		_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", u, tt.host, w.plain)
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err, "request %d on the same connection", i)
		body := readBody(t, resp)
		assert.Equal(t, tt.code, resp.StatusCode, u)
		assert.Equal(t, fmt.Sprintf(tt.body, w.plain), body, u)
		assert.False(t, resp.Close, "the connection stays open")
	}
	require.Len(t, p.refusals.all(), 1)
	assert.Equal(t, Refusal{Host: "evil.example", Port: w.plain, Reason: "not in allowed domains", Via: "http"}, p.refusals.all()[0])

	// Control: the refused name reaches the server when the client goes
	// directly.
	code, _, err := get(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/", w.plain))
	require.NoError(t, err)
	assert.Equal(t, 200, code)
}

// TestRefusals asks for destinations the rules refuse, on every side of
// the proxy, and checks the answer and the recorded refusal. Each is
// allowed by a second proxy whose rules allow it, or reachable directly:
// the probe can succeed.
func TestRefusals(t *testing.T) {
	w := newWorld(t)
	allowed := []string{"api.example", "*.ok.example", "meta.example", "rebind.example", "mixed.example", "bücher.example", fmt.Sprintf("portonly.example:%d", 1)}
	denied := []string{"bad.ok.example"}
	strict := startProxy(t, Options{Rules: mustRules(t, allowed, denied, nil), Resolve: w.resolver.resolve})
	open := startProxy(t, Options{Rules: mustRules(t, append(allowed, "evil.example", "ok.example"), nil, []string{"127.0.0.0/8", "169.254.0.0/16"}), Resolve: w.resolver.resolve})
	tests := []struct {
		name, host string
		reason     string
	}{
		{"not listed", "evil.example", "not in allowed domains"},
		{"wildcard does not cover its base", "ok.example", "not in allowed domains"},
		{"denied under an allowed wildcard", "bad.ok.example", "in denied domains"},
		{"IP literal", "127.0.0.1", "an IP address not in allowed IPs"},
		{"metadata by name", "meta.example", "resolves to 169.254.169.254, which is a cloud metadata endpoint and not in allowed IPs"},
		{"allowed name resolving to loopback", "api.example", "resolves to 127.0.0.1, which is loopback and not in allowed IPs"},
		{"IDNA name on loopback", "XN--Bcher-KVA.Example.", "resolves to 127.0.0.1, which is loopback and not in allowed IPs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := net.JoinHostPort(tt.host, fmt.Sprint(w.echo))
			shown := strings.ToLower(tt.host)
			if strings.HasPrefix(shown, "xn--") {
				shown = "xn--bcher-kva.example"
			}
			want := fmt.Sprintf("corral: blocked %s:%d (%s)", shown, w.echo, tt.reason)

			before := len(strict.refusals.all())
			c, status, body := strict.connect(t, addr)
			require.Nil(t, c)
			assert.Equal(t, "403 "+want, status)
			assert.Equal(t, want+"\n", body)

			_, err := strict.socksDial(addr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "connection not allowed by ruleset")

			got := strict.refusals.all()[before:]
			require.Len(t, got, 2)
			for i, via := range []string{"http", "socks5"} {
				assert.Equal(t, Refusal{Host: shown, Port: w.echo, Reason: tt.reason, Via: via}, got[i])
				assert.Equal(t, want, got[i].String())
			}

			// The same probe through a proxy that allows it.
			if tt.host == "meta.example" {
				return // nothing listens on 169.254.169.254 here
			}
			c, status, _ = open.connect(t, addr)
			require.NotNil(t, c, status)
			echoes(t, c)
			c.Close()
			c, err = open.socksDial(addr)
			require.NoError(t, err)
			echoes(t, c)
			c.Close()
		})
	}
}

// TestSOCKS5 connects by name (ATYP 3) and by address (ATYP 1) through
// the SOCKS5 side.
func TestSOCKS5(t *testing.T) {
	w := newWorld(t)
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example", "bücher.example"}, nil, loopback), Resolve: w.resolver.resolve})
	for _, host := range []string{"api.example", "API.Example.", "127.0.0.1", "BÜCHER.example", "xn--bcher-kva.example"} {
		c, err := p.socksDial(net.JoinHostPort(host, fmt.Sprint(w.echo)))
		require.NoError(t, err, host)
		echoes(t, c)
		c.Close()
	}
	assert.Empty(t, p.refusals.all())
}
