package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"time"
)

// serveHTTP serves one request to the HTTP proxy.
func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.enter() {
		http.Error(w, "corral: proxy closed", http.StatusServiceUnavailable)
		return
	}
	defer p.wg.Done()
	if !p.proxyAuthorized(r.Header) {
		askCredential(w)
		return
	}
	// The credential is the sandbox's: it goes no further.
	r.Header.Del("Proxy-Authorization")
	if r.Method == http.MethodConnect {
		p.serveCONNECT(w, r)
		return
	}
	p.serveForward(w, r)
}

// serveCONNECT opens a tunnel to an allowed host:port.
func (p *Proxy) serveCONNECT(w http.ResponseWriter, r *http.Request) {
	host, port, ok := splitHostPort(r.Host, 0)
	if !ok {
		http.Error(w, fmt.Sprintf("corral: CONNECT %q: want host:port", printable(r.Host)), http.StatusBadRequest)
		return
	}
	rules := p.rules.Load()
	t, ref := rules.authorize(host, port, "http")
	if ref != nil {
		p.refuseCONNECT(w, *ref)
		return
	}
	if p.secrets.bound(t) {
		p.interceptCONNECT(w, t)
		return
	}
	l, err := p.connect(r.Context(), rules, t, "http")
	var re *refusalError
	switch {
	case errors.As(err, &re):
		p.refuseCONNECT(w, re.r)
		return
	case err != nil:
		p.cannotReach(t, err)
		http.Error(w, fmt.Sprintf("corral: cannot reach %s: %v", t.hostPort(), err), http.StatusBadGateway)
		return
	}
	client, brw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		l.conn.Close()
		return
	}
	client.SetDeadline(time.Time{})
	if !p.addConn(client) || !p.addConn(l.conn) {
		p.closeConn(client)
		p.closeConn(l.conn)
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		p.closeConn(client)
		p.closeConn(l.conn)
		return
	}
	var early []byte
	if n := brw.Reader.Buffered(); n > 0 {
		early, _ = brw.Reader.Peek(n)
	}
	p.relay(client, l.conn, early, l.pending)
}

// refuseCONNECT answers a refused CONNECT with 403, the refusal line both
// as the reason phrase (which clients such as pip and Go's put in their
// error) and as the body, and reports it.
func (p *Proxy) refuseCONNECT(w http.ResponseWriter, r Refusal) {
	p.refused(r)
	line := r.String()
	c, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		http.Error(w, line, http.StatusForbidden)
		return
	}
	if !p.addConn(c) {
		p.closeConn(c)
		return
	}
	defer p.hangUp(c)
	write403(c, line)
}

// write403 answers c 403 with line as the reason phrase and the body, and
// says the connection closes.
func write403(c net.Conn, line string) {
	fmt.Fprintf(c, "HTTP/1.1 403 %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		line, len(line)+1, line)
}

// serveForward forwards an absolute-form request (GET http://host/path)
// to an allowed host. Each request on a connection is checked.
func (p *Proxy) serveForward(w http.ResponseWriter, r *http.Request) {
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "corral: this is a proxy: ask for an absolute http:// URL, or CONNECT host:port", http.StatusBadRequest)
		return
	}
	host, port, ok := splitHostPort(r.URL.Host, 80)
	if !ok {
		http.Error(w, fmt.Sprintf("corral: %q: want host or host:port", printable(r.URL.Host)), http.StatusBadRequest)
		return
	}
	t, ref := p.rules.Load().authorize(host, port, "http")
	if ref != nil {
		p.refused(*ref)
		http.Error(w, ref.String(), http.StatusForbidden)
		return
	}
	// The transport dials what the URL names: the checked form.
	r.URL.Host = t.hostPort()
	if p.secrets != nil {
		p.secrets.apply(r, t)
		if p.secrets.bound(t) {
			p.secretFwd.ServeHTTP(w, r)
			return
		}
	}
	p.fwd.ServeHTTP(w, r)
}

func (p *Proxy) forwarder() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:   func(*httputil.ProxyRequest) {},
		Transport: p.trans,
		ErrorLog:  log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var re *refusalError
			switch {
			case errors.As(err, &re):
				p.refused(re.r)
				http.Error(w, re.r.String(), http.StatusForbidden)
			case errors.Is(err, context.Canceled):
				w.WriteHeader(http.StatusBadGateway)
			default:
				http.Error(w, fmt.Sprintf("corral: cannot reach %s: %v", r.URL.Host, err), http.StatusBadGateway)
			}
		},
	}
}

// newTransport returns the transport plain HTTP requests are forwarded
// with: its every new connection is checked against the rules in force
// and dialled by connect.
func (p *Proxy) newTransport() *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, port, ok := splitHostPort(addr, 0)
			if !ok {
				return nil, fmt.Errorf("bad address %q", addr)
			}
			rules := p.rules.Load()
			t, ref := rules.authorize(host, port, "http")
			if ref != nil {
				return nil, &refusalError{*ref}
			}
			l, err := p.connect(ctx, rules, t, "http")
			if err != nil {
				return nil, err
			}
			if len(l.pending) > 0 {
				return &prefixConn{Conn: l.conn, prefix: l.pending}, nil
			}
			return l.conn, nil
		},
		MaxIdleConns:        100,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// prefixConn is a connection whose first bytes were already read.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// splitHostPort splits "host:port", or a bare host when defPort is not
// 0; the port must be a number.
func splitHostPort(hp string, defPort int) (string, int, bool) {
	host, ps, err := net.SplitHostPort(hp)
	if err != nil {
		if defPort == 0 || hp == "" {
			return "", 0, false
		}
		h := hp
		if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
			h = h[1 : len(h)-1]
		}
		return h, defPort, true
	}
	port, err := strconv.Atoi(ps)
	if err != nil || host == "" {
		return "", 0, false
	}
	return host, port, true
}
