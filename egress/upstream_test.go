package egress

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeUpstream is an HTTP proxy that only tunnels: it records every
// CONNECT it is asked for with its Proxy-Authorization, resolves names
// with its own map, and can send bytes right after its 200 in the same
// write, as a proxy does when the destination speaks first.
type fakeUpstream struct {
	srv      *httptest.Server
	resolver mapResolver
	early    string
	status   int

	mu   sync.Mutex
	seen []string // "host:port auth"
}

func newFakeUpstream(t *testing.T, res mapResolver) *fakeUpstream {
	f := &fakeUpstream{resolver: res, status: http.StatusOK}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeUpstream) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, r.Host+" "+r.Header.Get("Proxy-Authorization"))
	f.mu.Unlock()
	if r.Method != http.MethodConnect || f.status != http.StatusOK {
		http.Error(w, "no", f.status)
		return
	}
	host, port, _ := net.SplitHostPort(r.Host)
	addrs, err := f.resolver.resolve(r.Context(), host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	dst, err := net.Dial("tcp", net.JoinHostPort(addrs[0].String(), port))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer dst.Close()
	c, _, _ := w.(http.Hijacker).Hijack()
	defer c.Close()
	io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n"+f.early)
	go func() { io.Copy(dst, c); dst.Close() }()
	io.Copy(c, dst)
}

func (f *fakeUpstream) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func (f *fakeUpstream) url(user *url.Userinfo) *url.URL {
	u, _ := url.Parse(f.srv.URL)
	u.User = user
	return u
}

// publicNames resolves api.example to a public address, here and
// unreachable: the proxy checks it, the upstream (which resolves the name
// again itself, from its own map) reaches its server.
var publicNames = mapResolver{"api.example": {"8.8.8.8"}}

// TestUpstreamChain: with an upstream proxy, allowed connections go
// through it by name, with its credentials, once the name's addresses,
// resolved here, passed the address check; refused ones never reach it;
// NO_PROXY names and loopback are dialled directly.
func TestUpstreamChain(t *testing.T) {
	echo := echoServer(t)
	web := helloServer(t, false)
	up := newFakeUpstream(t, mapResolver{"api.example": {"127.0.0.1"}})
	local := mapResolver{"near.example": {"127.0.0.1"}, "api.example": {"127.0.0.1"}}
	p := startProxy(t, Options{
		Rules:      mustRules(t, []string{"api.example", "near.example"}, nil, []string{"127.0.0.1"}),
		Resolve:    local.resolve,
		Upstream:   up.url(url.UserPassword("user", "p@ss")),
		NoUpstream: "near.example",
	})
	auth := "Basic dXNlcjpwQHNz"

	target := fmt.Sprintf("api.example:%d", echo)
	c, status, _ := p.connect(t, target)
	require.NotNil(t, c, status)
	echoes(t, c)
	c.Close()
	c, err := p.socksDial(target)
	require.NoError(t, err)
	echoes(t, c)
	c.Close()
	code, body, err := get(p.httpClient(nil), fmt.Sprintf("http://api.example:%d/p", port(t, web)))
	require.NoError(t, err)
	assert.Equal(t, 200, code)
	assert.Equal(t, fmt.Sprintf("hello from api.example:%d/p", port(t, web)), body)
	want := []string{target + " " + auth, target + " " + auth, fmt.Sprintf("api.example:%d %s", port(t, web), auth)}
	assert.Equal(t, want, up.requests())

	// Refused: never reaches the upstream.
	_, status, _ = p.connect(t, fmt.Sprintf("evil.example:%d", echo))
	assert.Equal(t, fmt.Sprintf("403 corral: blocked evil.example:%d (not in allowed domains)", echo), status)
	// NO_PROXY and loopback: direct, resolved and checked here.
	for _, direct := range []string{"near.example", "127.0.0.1"} {
		c, status, _ = p.connect(t, fmt.Sprintf("%s:%d", direct, echo))
		require.NotNil(t, c, status)
		echoes(t, c)
		c.Close()
	}
	assert.Equal(t, want, up.requests(), "nothing more went through the upstream")
}

// TestUpstreamEarlyBytes: bytes the upstream sends with its 200 reach the
// client first.
func TestUpstreamEarlyBytes(t *testing.T) {
	echo := echoServer(t)
	up := newFakeUpstream(t, mapResolver{"api.example": {"127.0.0.1"}})
	up.early = "banner\n"
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, nil), Resolve: publicNames.resolve, Upstream: up.url(nil)})
	for _, dial := range []func() (net.Conn, error){
		func() (net.Conn, error) {
			c, status, _ := p.connect(t, fmt.Sprintf("api.example:%d", echo))
			return c, errIf(c == nil, status)
		},
		func() (net.Conn, error) { return p.socksDial(fmt.Sprintf("api.example:%d", echo)) },
	} {
		c, err := dial()
		require.NoError(t, err)
		b := make([]byte, len("banner\n"))
		_, err = io.ReadFull(c, b)
		require.NoError(t, err)
		assert.Equal(t, "banner\n", string(b))
		echoes(t, c)
		c.Close()
	}
	assert.Len(t, up.requests(), 2)
}

// TestUpstreamRefuses: an upstream's own refusal is a 502 naming it, not
// a refusal of the rules.
func TestUpstreamRefuses(t *testing.T) {
	up := newFakeUpstream(t, nil)
	up.status = http.StatusProxyAuthRequired
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, nil), Resolve: publicNames.resolve, Upstream: up.url(nil)})
	_, status, body := p.connect(t, "api.example:443")
	assert.Equal(t, "502 Bad Gateway", status)
	assert.Contains(t, body, `corral: cannot reach api.example:443: upstream proxy answered "407 Proxy Authentication Required"`)
	assert.Empty(t, p.refusals.all())
}

func errIf(cond bool, msg string) error {
	if cond {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

func TestFromEnvironment(t *testing.T) {
	tests := []struct {
		env      map[string]string
		upstream string
		noProxy  string
		err      string
	}{
		{env: nil},
		{env: map[string]string{"HTTPS_PROXY": "http://proxy.corp:3128", "HTTP_PROXY": "http://other:1", "NO_PROXY": "corp,10.0.0.0/8"}, upstream: "http://proxy.corp:3128", noProxy: "corp,10.0.0.0/8"},
		{env: map[string]string{"https_proxy": "proxy.corp:3128", "no_proxy": ".internal"}, upstream: "http://proxy.corp:3128", noProxy: ".internal"},
		{env: map[string]string{"HTTP_PROXY": "http://u:secret@proxy.corp:8080"}, upstream: "http://u:secret@proxy.corp:8080"},
		{env: map[string]string{"http_proxy": "https://proxy.corp"}, upstream: "https://proxy.corp"},
		{env: map[string]string{"HTTPS_PROXY": "socks5://u:secret@proxy.corp:1080"}, err: `egress: HTTPS_PROXY: proxy socks5://u:xxxxx@proxy.corp:1080: scheme "socks5" is not supported (http or https)`},
		{env: map[string]string{"HTTP_PROXY": "http://u:secret@:80"}, err: "egress: HTTP_PROXY: proxy http://u:xxxxx@:80: no host"},
		{env: map[string]string{"HTTP_PROXY": "http://u:sec ret@proxy%zz"}, err: "egress: HTTP_PROXY: not a valid proxy URL"},
	}
	for _, tt := range tests {
		o := Options{Upstream: &url.URL{Host: "stale"}, NoUpstream: "stale"}
		err := o.FromEnvironment(func(k string) string { return tt.env[k] })
		if tt.err != "" {
			require.EqualError(t, err, tt.err)
			assert.NotContains(t, err.Error(), "secret")
			continue
		}
		require.NoError(t, err)
		if tt.upstream == "" {
			assert.Nil(t, o.Upstream)
		} else {
			require.NotNil(t, o.Upstream)
			assert.Equal(t, tt.upstream, o.Upstream.String())
			_, err := New(o)
			assert.NoError(t, err)
		}
		assert.Equal(t, tt.noProxy, o.NoUpstream)
	}
	_, err := New(Options{Upstream: &url.URL{Scheme: "socks5", Host: "x:1"}})
	assert.EqualError(t, err, `egress: upstream proxy socks5://x:1: scheme "socks5" is not supported (http or https)`)
}

// TestUpstreamKeepsTheRules: through an upstream proxy, a name is still
// resolved and its addresses checked here before the upstream is asked:
// one that resolves to loopback, to the host's own address or to a mix
// of a public address and an internal one is refused and never reaches
// the upstream. The control: with loopback allowed, the same name
// reaches the server through the upstream, as it would without the
// check.
func TestUpstreamKeepsTheRules(t *testing.T) {
	echo := echoServer(t)
	names := mapResolver{
		"loop.example":  {"127.0.0.1"},
		"mixed.example": {"8.8.8.8", "127.0.0.1"},
		"test.example":  {"198.51.100.7"},
	}
	for _, tt := range []struct {
		name   string
		ips    []string
		reason string
	}{
		{"loop.example", nil, "resolves to 127.0.0.1, which is loopback and not in allowed IPs"},
		{"mixed.example", nil, "resolves to 127.0.0.1, which is loopback and not in allowed IPs, and the upstream proxy would choose among its addresses itself"},
		{"test.example", nil, "resolves to 198.51.100.7, which is special-purpose (documentation, TEST-NET-2) and not in allowed IPs"},
		{"loop.example", loopback, ""},
	} {
		up := newFakeUpstream(t, names)
		p := startProxy(t, Options{
			Rules:   mustRules(t, []string{"loop.example", "mixed.example", "test.example"}, nil, tt.ips),
			Resolve: names.resolve, Upstream: up.url(nil),
		})
		target := fmt.Sprintf("%s:%d", tt.name, echo)
		c, status, _ := p.connect(t, target)
		_, serr := p.socksDial(target)
		if tt.reason == "" {
			require.NotNil(t, c, "control: %s", status)
			echoes(t, c)
			c.Close()
			require.NoError(t, serr)
			assert.Len(t, up.requests(), 2, "control: through the upstream")
			continue
		}
		assert.Equal(t, "403 corral: blocked "+target+" ("+tt.reason+")", status)
		assert.Error(t, serr)
		assert.Empty(t, up.requests(), "%s never reached the upstream", tt.name)
		assert.Len(t, p.refusals.all(), 2)
	}
}
