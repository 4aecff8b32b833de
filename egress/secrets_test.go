package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testValue = "ghp_RealValueThatMustNeverReachTheCommand0"

// seen is what a test server received: the headers and query of each
// request, and its body.
type seen struct {
	mu   sync.Mutex
	reqs []string
}

func (s *seen) add(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, fmt.Sprintf("%s %s %v %s %s", r.Proto, r.URL.RawQuery, r.Header, b, r.Host))
}

func (s *seen) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		return ""
	}
	return s.reqs[len(s.reqs)-1]
}

// recordingServer records each request and answers with its
// Authorization header, as a server that echoes a token would.
func recordingServer(t testing.TB, useTLS, h2 bool) (*httptest.Server, *seen) {
	s := &seen{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.add(r)
		fmt.Fprintf(w, "auth=%s proto=%s", r.Header.Get("Authorization"), r.Proto)
	}))
	srv.EnableHTTP2 = h2
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, s
}

// secretProxy serves a proxy that allows example.com and other.example
// (both on loopback) and adds testValue for example.com only. roots
// verify the servers.
func secretProxy(t testing.TB, roots *x509.CertPool, exposures *[]Exposure) (*running, *CA, string) {
	ca, err := NewCA()
	require.NoError(t, err)
	ph, err := NewPlaceholder(testValue)
	require.NoError(t, err)
	var mu sync.Mutex
	r := startProxy(t, Options{
		Rules:   mustRules(t, []string{"example.com", "other.example"}, nil, loopback),
		Resolve: mapResolver{"example.com": {"127.0.0.1"}, "other.example": {"127.0.0.1"}}.resolve,
		Secrets: &SecretOptions{
			Secrets: []Secret{{Name: "GITHUB_TOKEN", Value: testValue, Placeholder: ph, Domains: []string{"example.com"}}},
			CA:      ca,
			Roots:   roots,
			OnExposure: func(e Exposure) {
				mu.Lock()
				defer mu.Unlock()
				*exposures = append(*exposures, e)
			},
		},
	})
	return r, ca, ph
}

// secretClient uses the proxy and trusts the CA alone.
func (r *running) secretClient(ca *CA, h2 bool) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM())
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: r.httpAddr}),
		TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
	return &http.Client{Transport: tr}
}

func serverPool(srv *httptest.Server) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return pool
}

func TestPlaceholderShape(t *testing.T) {
	for _, v := range []string{testValue, "github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789", "short"} {
		ph, err := NewPlaceholder(v)
		require.NoError(t, err)
		assert.NotContains(t, ph, v)
		if len(v) > 30 {
			assert.Len(t, ph, len(v), "a placeholder keeps the value's length")
			i := strings.IndexAny(v[3:], "_-") + 4
			assert.Equal(t, v[:i], ph[:i], "the known prefix is kept")
		}
		other, _ := NewPlaceholder(v)
		assert.NotEqual(t, ph, other, "random each time")
	}
}

func TestSecretPlainHTTP(t *testing.T) {
	var exposures []Exposure
	bound, got := recordingServer(t, false, false)
	r, ca, ph := secretProxy(t, nil, &exposures)
	c := r.secretClient(ca, false)

	req, _ := http.NewRequest("GET", fmt.Sprintf("http://example.com:%d/x?token=%s", port(t, bound), ph), nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	req.Header.Set("X-Api-Key", ph)
	resp, err := c.Do(req)
	require.NoError(t, err)
	body := readBody(t, resp)
	assert.Contains(t, got.last(), "token="+testValue)
	assert.Contains(t, got.last(), "Bearer "+testValue)
	assert.Contains(t, got.last(), "X-Api-Key:["+testValue+"]")
	assert.Equal(t, "auth=Bearer "+ph+" proto=HTTP/1.1", body, "an echoed value comes back as the placeholder")

	req, _ = http.NewRequest("GET", fmt.Sprintf("http://other.example:%d/?token=%s", port(t, bound), ph), nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	resp, err = c.Do(req)
	require.NoError(t, err)
	readBody(t, resp)
	assert.Contains(t, got.last(), "Bearer "+ph, "another domain gets the placeholder")
	assert.NotContains(t, got.last(), testValue)
	require.Len(t, exposures, 1)
	assert.Equal(t, Exposure{Name: "GITHUB_TOKEN", Host: "other.example", Port: port(t, bound)}, exposures[0])
	assert.NotContains(t, exposures[0].String(), testValue)
}

func TestSecretHTTPS(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2=%v", h2), func(t *testing.T) {
			var exposures []Exposure
			srv, got := recordingServer(t, true, h2)
			r, ca, ph := secretProxy(t, serverPool(srv), &exposures)
			c := r.secretClient(ca, h2)
			req, _ := http.NewRequest("POST", fmt.Sprintf("https://example.com:%d/?k=%s", port(t, srv), ph), strings.NewReader("body "+ph))
			req.Header.Set("Authorization", "Bearer "+ph)
			req.SetBasicAuth("x-access-token", ph)
			resp, err := c.Do(req)
			require.NoError(t, err)
			body := readBody(t, resp)
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			want := "HTTP/1.1"
			if h2 {
				want = "HTTP/2.0"
			}
			assert.Equal(t, want, resp.Proto, "the command's side")
			assert.True(t, strings.HasPrefix(got.last(), want+" "), "the server's side: %s", got.last())
			assert.Contains(t, got.last(), "k="+testValue)
			assert.Contains(t, got.last(), "body "+ph, "a body is left alone unless asked")
			assert.NotContains(t, body, testValue)
			assert.Empty(t, exposures)
		})
	}
}

func TestSecretHTTPSRefusesUnverifiedServer(t *testing.T) {
	var exposures []Exposure
	srv, got := recordingServer(t, true, false)
	r, ca, ph := secretProxy(t, x509.NewCertPool(), &exposures) // trusts nothing
	c := r.secretClient(ca, false)
	req, _ := http.NewRequest("GET", fmt.Sprintf("https://example.com:%d/", port(t, srv)), nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	resp, err := c.Do(req)
	require.NoError(t, err)
	body := readBody(t, resp)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Contains(t, body, "its certificate does not verify against the caller's trust store")
	assert.NotContains(t, body, testValue)
	assert.Empty(t, got.last(), "nothing reached the server")
	refs := r.refusals.all()
	require.Len(t, refs, 1)
	assert.NotContains(t, refs[0].String(), testValue)

	// The same request with the server trusted goes through: the refusal
	// was the verification's.
	r2, ca2, ph2 := secretProxy(t, serverPool(srv), &exposures)
	req, _ = http.NewRequest("GET", fmt.Sprintf("https://example.com:%d/", port(t, srv)), nil)
	req.Header.Set("Authorization", "Bearer "+ph2)
	resp, err = r2.secretClient(ca2, false).Do(req)
	require.NoError(t, err)
	readBody(t, resp)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, got.last(), testValue)
}

func TestSecretOtherDomainTunnelled(t *testing.T) {
	// A CONNECT to a domain without a secret is a tunnel: the command sees
	// the server's own certificate, not one of the CA's.
	var exposures []Exposure
	srv, _ := recordingServer(t, true, false)
	r, _, _ := secretProxy(t, serverPool(srv), &exposures)
	c, status, _ := r.connect(t, fmt.Sprintf("other.example:%d", port(t, srv)))
	require.Contains(t, status, "200")
	tc := tls.Client(c, &tls.Config{RootCAs: serverPool(srv), ServerName: "example.com"})
	require.NoError(t, tc.Handshake())
	tc.Close()
}

func TestSecretWebSocketUpgrade(t *testing.T) {
	var exposures []Exposure
	var auth string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		c, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		line, _ := brw.ReadString('\n')
		io.WriteString(c, "echo "+line)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	r, ca, ph := secretProxy(t, serverPool(srv), &exposures)
	c, status, _ := r.connect(t, fmt.Sprintf("example.com:%d", port(t, srv)))
	require.Contains(t, status, "200")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM())
	tc := tls.Client(c, &tls.Config{RootCAs: pool, ServerName: "example.com", NextProtos: []string{"http/1.1"}})
	defer tc.Close()
	fmt.Fprintf(tc, "GET /ws HTTP/1.1\r\nHost: example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nAuthorization: Bearer %s\r\n\r\n", ph)
	br := bufio.NewReader(tc)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	io.WriteString(tc, "hi\n")
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "echo hi\n", line)
	assert.Equal(t, "Bearer "+testValue, auth)
}

func TestSecretBody(t *testing.T) {
	srv, got := recordingServer(t, false, false)
	ca, err := NewCA()
	require.NoError(t, err)
	r := startProxy(t, Options{
		Rules:   mustRules(t, []string{"example.com"}, nil, loopback),
		Resolve: mapResolver{"example.com": {"127.0.0.1"}}.resolve,
		Secrets: &SecretOptions{CA: ca, Secrets: []Secret{{Name: "T", Value: "short", Placeholder: strings.Repeat("p", 32), Domains: []string{"example.com"}, Body: true}}},
	})
	big := strings.Repeat("x", 40000) + strings.Repeat("p", 32) + "tail"
	resp, err := r.secretClient(ca, false).Post(fmt.Sprintf("http://example.com:%d/", port(t, srv)), "text/plain", strings.NewReader(big))
	require.NoError(t, err)
	readBody(t, resp)
	assert.Contains(t, got.last(), strings.Repeat("x", 100)+"shorttail")
}

func TestReplacerAcrossReads(t *testing.T) {
	for _, chunk := range []int{1, 2, 3, 7, 100} {
		src := "aaPLACEHOLDERbbPLACEHOLDERPLACEHOLDERcc PLACEHOLDE"
		r := replacing(io.NopCloser(&chunked{s: src, n: chunk}), []byte("PLACEHOLDER"), []byte("v"))
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.Equal(t, "aavbbvvcc PLACEHOLDE", string(b), "chunk %d", chunk)
	}
}

type chunked struct {
	s string
	n int
}

func (c *chunked) Read(b []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), c.n)], c.s)
	c.s = c.s[n:]
	return n, nil
}

var _ net.Conn = (*bufConn)(nil)

func TestSecretThroughSOCKS5(t *testing.T) {
	var exposures []Exposure
	srv, got := recordingServer(t, true, false)
	r, ca, ph := secretProxy(t, serverPool(srv), &exposures)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM())
	c := &http.Client{Transport: &http.Transport{
		DialContext:     func(_ context.Context, _, addr string) (net.Conn, error) { return r.socksDial(addr) },
		TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", fmt.Sprintf("https://example.com:%d/", port(t, srv)), nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	resp, err := c.Do(req)
	require.NoError(t, err)
	assert.Equal(t, "auth=Bearer "+ph+" proto=HTTP/1.1", readBody(t, resp))
	assert.Contains(t, got.last(), "Bearer "+testValue)
}
