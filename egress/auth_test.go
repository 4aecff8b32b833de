package egress

import (
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	xproxy "golang.org/x/net/proxy"
)

// credClient is an HTTP client of r's HTTP side whose proxy URL carries
// user:password, as the sandbox's proxy variables do.
func (r *running) credClient(user *url.Userinfo) *http.Client {
	u := &url.URL{Scheme: "http", Host: r.httpAddr, User: user}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}}
}

// credSOCKS connects to addr through r's SOCKS5 side with auth (nil: no
// authentication offered).
func (r *running) credSOCKS(addr string, auth *xproxy.Auth) (net.Conn, error) {
	d, err := xproxy.SOCKS5("tcp", r.socksAddr, auth, xproxy.Direct)
	if err != nil {
		return nil, err
	}
	return d.Dial("tcp", addr)
}

// headerServer answers each request with its Proxy-Authorization header.
func headerServer(t *testing.T) int {
	srv := helloServer(t, false)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "auth=%q", r.Header.Get("Proxy-Authorization"))
	})
	return port(t, srv)
}

// TestCredential: a proxy with a credential serves the clients that give
// it, on both sides, and answers every other 407 (SOCKS5: an
// authentication failure), reporting nothing of what they asked for and
// reaching nothing. The control: the same clients without the credential
// are served by a proxy without one.
func TestCredential(t *testing.T) {
	echo := echoServer(t)
	hdr := headerServer(t)
	res := mapResolver{"api.example": {"127.0.0.1"}}
	rules := mustRules(t, []string{"api.example"}, nil, loopback)
	target := fmt.Sprintf("api.example:%d", echo)
	page := fmt.Sprintf("http://api.example:%d/", hdr)

	open := startProxy(t, Options{Rules: rules, Resolve: res.resolve})
	c, status, _ := open.connect(t, target)
	require.NotNil(t, c, "control: %s", status)
	c.Close()
	c, err := open.socksDial(target)
	require.NoError(t, err, "control")
	c.Close()
	code, _, err := get(open.httpClient(nil), page)
	require.NoError(t, err)
	require.Equal(t, 200, code, "control")

	cred, err := NewCredential()
	require.NoError(t, err)
	require.Len(t, cred, 32)
	p := startProxy(t, Options{Rules: rules, Resolve: res.resolve, Credential: cred})

	// Outsiders: no credential, or a wrong one.
	_, status, body := p.connect(t, target)
	assert.Equal(t, "407 Proxy Authentication Required", status)
	assert.Contains(t, body, credentialLine)
	for _, user := range []*url.Userinfo{nil, url.UserPassword(CredentialUser, "nope"), url.User(cred),
		url.UserPassword(CredentialUser, cred[:31]), url.UserPassword(CredentialUser, cred+"0")} {
		code, body, err := get(p.credClient(user), page)
		require.NoError(t, err)
		assert.Equal(t, http.StatusProxyAuthRequired, code, "%v: %s", user, body)
		_, err = p.credClient(user).Get(fmt.Sprintf("https://%s/", target))
		assert.ErrorContains(t, err, "Proxy Authentication Required", "%v", user)
	}
	_, status, _ = p.connect(t, "evil.example:443")
	assert.Equal(t, "407 Proxy Authentication Required", status, "a refused destination is not even looked at")
	_, err = p.credSOCKS(target, nil)
	assert.Error(t, err, "SOCKS5 without authentication")
	_, err = p.credSOCKS(target, &xproxy.Auth{User: CredentialUser, Password: "nope"})
	assert.Error(t, err, "SOCKS5 with a wrong password")
	_, err = p.credSOCKS("evil.example:443", &xproxy.Auth{User: CredentialUser, Password: "nope"})
	assert.Error(t, err)
	assert.Empty(t, p.refusals.all(), "nothing an outsider asked for is reported")

	// The sandbox's own clients.
	code, body, err = get(p.credClient(url.UserPassword(CredentialUser, cred)), page)
	require.NoError(t, err)
	assert.Equal(t, 200, code)
	assert.Equal(t, `auth=""`, body, "the credential goes no further than the proxy")
	c, err = p.credSOCKS(target, &xproxy.Auth{User: CredentialUser, Password: cred})
	require.NoError(t, err)
	echoes(t, c)
	c.Close()
	c, err = net.Dial("tcp", p.httpAddr)
	require.NoError(t, err)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: basic %s\r\n\r\n", target, target,
		strings.TrimPrefix(basic("any-user", cred), "Basic "))
	line, err := newReader(c).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "HTTP/1.1 200 Connection established\r\n", line)
	c.Close()
	_, err = p.credSOCKS("evil.example:443", &xproxy.Auth{User: CredentialUser, Password: cred})
	assert.Error(t, err)
	assert.Len(t, p.refusals.all(), 1, "the sandbox's own refusal is reported")
}

// TestCredentialNeverReachesTheUpstream: through an upstream proxy, the
// upstream gets the caller's credentials, never the sandbox's.
func TestCredentialNeverReachesTheUpstream(t *testing.T) {
	echo := echoServer(t)
	hdr := headerServer(t)
	res := mapResolver{"api.example": {"127.0.0.1"}}
	up := newFakeUpstream(t, res)
	cred, err := NewCredential()
	require.NoError(t, err)
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, loopback), Resolve: res.resolve,
		Upstream: up.url(url.UserPassword("caller", "secret")), Credential: cred})
	client := p.credClient(url.UserPassword(CredentialUser, cred))
	code, body, err := get(client, fmt.Sprintf("http://api.example:%d/", hdr))
	require.NoError(t, err)
	assert.Equal(t, 200, code)
	assert.Equal(t, `auth=""`, body)
	c, err := p.credSOCKS(fmt.Sprintf("api.example:%d", echo), &xproxy.Auth{User: CredentialUser, Password: cred})
	require.NoError(t, err)
	echoes(t, c)
	c.Close()
	require.Len(t, up.requests(), 2)
	for _, r := range up.requests() {
		assert.NotContains(t, r, basic(CredentialUser, cred))
		assert.True(t, strings.HasSuffix(r, " "+basic("caller", "secret")), r)
	}

	// An outsider's CONNECT never reaches the upstream with the
	// caller's credentials.
	_, status, _ := p.connect(t, fmt.Sprintf("api.example:%d", echo))
	assert.Equal(t, "407 Proxy Authentication Required", status)
	assert.Len(t, up.requests(), 2)
}

// TestCredentialOverTheCap: a connection over the cap without the
// credential is answered 407, unreported.
func TestCredentialOverTheCap(t *testing.T) {
	cred, err := NewCredential()
	require.NoError(t, err)
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, nil), MaxConns: 1, Credential: cred})
	held, err := net.Dial("tcp", p.httpAddr)
	require.NoError(t, err)
	defer held.Close()
	// The held connection is counted once the server accepted it:
	// a request on it answered shows that.
	fmt.Fprintf(held, "GET http://nowhere.example/ HTTP/1.1\r\nHost: nowhere.example\r\nProxy-Authorization: %s\r\n\r\n", basic("u", cred))
	resp, err := http.ReadResponse(newReader(held), nil)
	require.NoError(t, err)
	resp.Body.Close()
	for _, auth := range []string{"", basic("u", cred)} {
		c, err := net.Dial("tcp", p.httpAddr)
		require.NoError(t, err)
		fmt.Fprintf(c, "CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\n")
		if auth != "" {
			fmt.Fprintf(c, "Proxy-Authorization: %s\r\n", auth)
		}
		io.WriteString(c, "\r\n")
		resp, err := http.ReadResponse(newReader(c), &http.Request{Method: http.MethodConnect})
		require.NoError(t, err)
		if auth == "" {
			assert.Equal(t, http.StatusProxyAuthRequired, resp.StatusCode)
		} else {
			assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		}
		c.Close()
	}
	refs := p.refusals.all()
	require.Len(t, refs, 2, "%v", refs) // the held request's, and the sandbox's own over the cap
	assert.Equal(t, reasonTooMany(1), refs[1].Reason)
}

func basic(user, pw string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
}
