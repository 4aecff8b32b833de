package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// upstream is the proxy allowed connections are chained through.
type upstream struct {
	addr       string // host:port to dial
	serverName string // for TLS to an https proxy
	tls        bool
	auth       string // Proxy-Authorization value, or ""
	proxyFor   func(*url.URL) (*url.URL, error)
}

// FromEnvironment sets o.Upstream and o.NoUpstream from the proxy
// variables that getenv (os.Getenv when nil) returns: HTTPS_PROXY, else
// HTTP_PROXY (upper case first, then lower case, as Go's own clients read
// them), and NO_PROXY. A variable without a scheme is taken as http://. It
// is an error, naming the variable, when the proxy is not an http or https
// URL; an unset or empty variable leaves o.Upstream nil.
func (o *Options) FromEnvironment(getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	name, raw := firstSet(getenv, "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")
	_, noProxy := firstSet(getenv, "NO_PROXY", "no_proxy")
	if raw == "" {
		o.Upstream, o.NoUpstream = nil, ""
		return nil
	}
	u, err := parseProxyURL(raw)
	if err != nil {
		return fmt.Errorf("egress: %s: %w", name, err)
	}
	o.Upstream, o.NoUpstream = u, noProxy
	return nil
}

func firstSet(getenv func(string) string, names ...string) (string, string) {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return n, v
		}
	}
	return "", ""
}

func parseProxyURL(raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url's errors quote the whole URL, password included.
		return nil, fmt.Errorf("not a valid proxy URL")
	}
	if err := checkProxyURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

func checkProxyURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("proxy %s: scheme %q is not supported (http or https)", u.Redacted(), u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("proxy %s: no host", u.Redacted())
	}
	return nil
}

func newUpstream(u *url.URL, noProxy string) (*upstream, error) {
	if u == nil {
		return nil, nil
	}
	if err := checkProxyURL(u); err != nil {
		return nil, fmt.Errorf("egress: upstream %w", err)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	up := &upstream{
		addr:       net.JoinHostPort(u.Hostname(), port),
		serverName: u.Hostname(),
		tls:        u.Scheme == "https",
	}
	if u.User != nil {
		pw, _ := u.User.Password()
		up.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
	}
	cfg := httpproxy.Config{HTTPProxy: u.String(), HTTPSProxy: u.String(), NoProxy: noProxy}
	up.proxyFor = cfg.ProxyFunc()
	return up, nil
}

// use reports whether t is reached through the upstream proxy: there is
// one, and NO_PROXY does not name t. Loopback destinations never are.
func (u *upstream) use(t target) bool {
	if u == nil {
		return false
	}
	pu, err := u.proxyFor(&url.URL{Scheme: "https", Host: t.hostPort()})
	return err == nil && pu != nil
}

// connect opens a tunnel to t through the upstream proxy. The proxy
// resolves t's name.
func (u *upstream) connect(ctx context.Context, d *net.Dialer, t target) (*link, error) {
	c, err := d.DialContext(ctx, "tcp", u.addr)
	if err != nil {
		return nil, fmt.Errorf("upstream proxy: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	c.SetDeadline(time.Now().Add(dialTimeout))
	l, err := u.handshake(c, t)
	if err != nil {
		c.Close()
		return nil, err
	}
	if !stop() {
		l.conn.Close()
		return nil, ctx.Err()
	}
	c.SetDeadline(time.Time{})
	return l, nil
}

func (u *upstream) handshake(c net.Conn, t target) (*link, error) {
	if u.tls {
		tc := tls.Client(c, &tls.Config{ServerName: u.serverName})
		if err := tc.Handshake(); err != nil {
			return nil, fmt.Errorf("upstream proxy: %w", err)
		}
		c = tc
	}
	hp := t.hostPort()
	req := "CONNECT " + hp + " HTTP/1.1\r\nHost: " + hp + "\r\n"
	if u.auth != "" {
		req += "Proxy-Authorization: " + u.auth + "\r\n"
	}
	if _, err := c.Write([]byte(req + "\r\n")); err != nil {
		return nil, fmt.Errorf("upstream proxy: %w", err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, fmt.Errorf("upstream proxy: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("upstream proxy answered %q", resp.Status)
	}
	l := &link{conn: c}
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		l.pending = append([]byte(nil), b...)
	}
	return l, nil
}
