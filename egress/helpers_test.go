package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	xproxy "golang.org/x/net/proxy"
)

// loopback is the range the positive tests allow: every test server
// listens on it, and the proxy refuses it unless allowed.
var loopback = []string{"127.0.0.0/8"}

// mapResolver resolves names from a map, never from DNS; a name not in
// it does not exist.
type mapResolver map[string][]string

func (m mapResolver) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	addrs, ok := m[host]
	if !ok {
		return nil, fmt.Errorf("no such host %q", host)
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// recorder collects refusals.
type recorder struct {
	mu   sync.Mutex
	list []Refusal
}

func (r *recorder) add(x Refusal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, x)
}

func (r *recorder) all() []Refusal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Refusal(nil), r.list...)
}

// running is a proxy serving both protocols on loopback.
type running struct {
	*Proxy
	httpAddr, socksAddr string
	refusals            *recorder
}

// mustRules parses rules or fails the test.
func mustRules(t testing.TB, allowed, denied, ips []string) *Rules {
	t.Helper()
	r, err := ParseRules(allowed, denied, ips)
	require.NoError(t, err)
	return r
}

// startProxy serves a proxy with o on two loopback listeners until the
// test ends, and checks that both Serve calls end cleanly on Close.
func startProxy(t testing.TB, o Options) *running {
	t.Helper()
	return startProxyWith(t, o, nil)
}

// startProxyWith is startProxy with a change to the proxy, made before it
// serves.
func startProxyWith(t testing.TB, o Options, change func(*Proxy)) *running {
	t.Helper()
	rec := &recorder{}
	if o.OnRefusal == nil {
		o.OnRefusal = rec.add
	}
	p, err := New(o)
	require.NoError(t, err)
	if change != nil {
		change(p)
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	errs := make(chan error, 2)
	go func() { errs <- p.ServeHTTPProxy(hl) }()
	go func() { errs <- p.ServeSOCKS5(sl) }()
	t.Cleanup(func() {
		require.NoError(t, p.Close())
		require.NoError(t, <-errs)
		require.NoError(t, <-errs)
	})
	return &running{Proxy: p, httpAddr: hl.Addr().String(), socksAddr: sl.Addr().String(), refusals: rec}
}

// httpClient is a client that uses the proxy's HTTP side for http and
// https URLs, trusting srv's certificate for any name.
func (r *running) httpClient(srv *httptest.Server) *http.Client {
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: r.httpAddr}), DisableKeepAlives: true}
	if srv != nil && srv.TLS != nil {
		tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		tr.TLSClientConfig.ServerName = "example.com"
	}
	return &http.Client{Transport: tr}
}

// socksDial connects to addr through the proxy's SOCKS5 side.
func (r *running) socksDial(addr string) (net.Conn, error) {
	d, err := xproxy.SOCKS5("tcp", r.socksAddr, nil, xproxy.Direct)
	if err != nil {
		return nil, err
	}
	return d.Dial("tcp", addr)
}

// connect sends CONNECT addr on a new connection to the HTTP side and
// returns the connection, the status line and the body of a refusal.
func (r *running) connect(t testing.TB, addr string) (net.Conn, string, string) {
	t.Helper()
	c, err := net.Dial("tcp", r.httpAddr)
	require.NoError(t, err)
	_, err = fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
	require.NoError(t, err)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	require.NoError(t, err)
	if resp.StatusCode == http.StatusOK {
		if n := br.Buffered(); n > 0 {
			early, _ := br.Peek(n)
			return &prefixConn{Conn: c, prefix: early}, resp.Status, ""
		}
		return c, resp.Status, ""
	}
	body, _ := io.ReadAll(resp.Body)
	c.Close()
	return nil, resp.Status, string(body)
}

// echoServer echoes every connection until the test ends; it returns its
// port.
func echoServer(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// echoes writes a line on c and reports whether it comes back.
func echoes(t testing.TB, c net.Conn) {
	t.Helper()
	_, err := io.WriteString(c, "ping\n")
	require.NoError(t, err)
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ping\n", line)
}

// helloServer answers every request with "hello from HOST" and counts
// the connections it accepted.
func helloServer(t testing.TB, useTLS bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s%s", r.Host, r.URL.Path)
	}))
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

func port(t testing.TB, srv *httptest.Server) int {
	t.Helper()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	_, p, ok := splitHostPort(u.Host, 0)
	require.True(t, ok)
	return p
}

func get(c *http.Client, u string) (int, string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), err
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }

func readBody(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}
