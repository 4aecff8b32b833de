package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// setupSecrets readies a proxy that carries secrets: the transport
// verifies servers against the caller's roots and speaks HTTP/2 where the
// server does, and requests to bound destinations go through a forwarder
// that puts placeholders back in responses and says what failed without
// any value.
func (p *Proxy) setupSecrets(o *SecretOptions) error {
	roots := o.Roots
	if roots == nil {
		pem, err := CallerRoots(nil)
		if err != nil {
			return err
		}
		if roots, err = RootPool(pem); err != nil {
			return err
		}
	}
	p.trans.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	p.trans.ForceAttemptHTTP2 = true
	p.h2 = &http2.Server{IdleTimeout: 5 * time.Minute}
	p.secretFwd = &httputil.ReverseProxy{
		Rewrite:   func(*httputil.ProxyRequest) {},
		Transport: p.trans,
		ErrorLog:  log.New(io.Discard, "", 0),
		ModifyResponse: func(resp *http.Response) error {
			p.secrets.scrubResponse(resp)
			return nil
		},
		ErrorHandler: p.secretError,
	}
	return nil
}

// secretError answers a request to a bound destination that could not be
// made. A server whose certificate does not verify is refused and
// reported; neither answer holds a secret's value.
func (p *Proxy) secretError(w http.ResponseWriter, r *http.Request, err error) {
	host, port, _ := splitHostPort(r.URL.Host, 443)
	var re *refusalError
	var ve *tls.CertificateVerificationError
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var ie x509.CertificateInvalidError
	switch {
	case errors.As(err, &re):
		p.refused(re.r)
		http.Error(w, re.r.String(), http.StatusForbidden)
	case errors.As(err, &ve), errors.As(err, &ue), errors.As(err, &he), errors.As(err, &ie):
		ref := Refusal{Host: host, Port: port, Via: "http",
			Reason: "its certificate does not verify against the caller's trust store: " + p.secrets.redact(verifyReason(err))}
		p.refused(ref)
		http.Error(w, ref.String(), http.StatusBadGateway)
	case errors.Is(err, context.Canceled):
		w.WriteHeader(http.StatusBadGateway)
	default:
		http.Error(w, p.secrets.redact(fmt.Sprintf("corral: cannot reach %s: %v", r.URL.Host, err)), http.StatusBadGateway)
	}
}

// verifyReason is the innermost words of a verification failure.
func verifyReason(err error) string {
	var ve *tls.CertificateVerificationError
	if errors.As(err, &ve) && ve.Err != nil {
		return ve.Err.Error()
	}
	return err.Error()
}

// interceptCONNECT answers a CONNECT to a destination that carries a
// secret and serves the requests that come through it itself: TLS is
// terminated with a certificate for t signed by the sandbox's CA, each
// request has its placeholders replaced and goes to t over a connection
// of the proxy's, verified against the caller's roots.
func (p *Proxy) interceptCONNECT(w http.ResponseWriter, t target) {
	client, brw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	client.SetDeadline(time.Time{})
	if !p.addConn(client) {
		p.closeConn(client)
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		p.closeConn(client)
		return
	}
	var early []byte
	if n := brw.Reader.Buffered(); n > 0 {
		early, _ = brw.Reader.Peek(n)
		early = append([]byte(nil), early...)
	}
	p.intercept(client, early, t)
}

// socksSecret reports whether a SOCKS5 request asks for an allowed
// destination that carries a secret, which the proxy then serves itself as
// it does a CONNECT.
func (p *Proxy) socksSecret(req socksRequest) (target, bool) {
	if p.secrets == nil || req.cmd != socksConnect {
		return target{}, false
	}
	t, ref := p.rules.Load().authorize(req.host, req.port, "socks5")
	return t, ref == nil && p.secrets.bound(t)
}

// intercept serves the requests of a client connection to t: TLS when the
// client starts a TLS handshake, else plain HTTP; HTTP/2 when the client
// offers it, else HTTP/1.1.
func (p *Proxy) intercept(client net.Conn, early []byte, t target) {
	defer p.closeConn(client)
	var c net.Conn = client
	if len(early) > 0 {
		c = &prefixConn{Conn: client, prefix: early}
	}
	c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	c = &bufConn{Conn: c, r: br}
	scheme := "http"
	if first[0] == 0x16 { // a TLS handshake record
		host := t.name
		if host == "" {
			host = t.addr.String()
		}
		tc := tls.Server(c, &tls.Config{
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return p.secrets.ca.leaf(host) },
			NextProtos:     []string{"h2", "http/1.1"},
			MinVersion:     tls.VersionTLS12,
		})
		if err := tc.HandshakeContext(p.ctx); err != nil {
			return
		}
		c, scheme = tc, "https"
	}
	c.SetReadDeadline(time.Time{})
	h := p.secretHandler(t, scheme)
	if tc, ok := c.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol == "h2" {
		p.h2.ServeConn(tc, &http2.ServeConnOpts{Context: p.ctx, Handler: h})
		return
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: handshakeTimeout,
		IdleTimeout:       5 * time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
		BaseContext:       func(net.Listener) context.Context { return p.ctx },
	}
	srv.Serve(newOneConn(c))
}

// secretHandler forwards one request that came through an intercepted
// connection to t: checked against the rules in force, as a plain HTTP
// request is, then with its placeholders replaced.
func (p *Proxy) secretHandler(t target, scheme string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.enter() {
			http.Error(w, "corral: proxy closed", http.StatusServiceUnavailable)
			return
		}
		defer p.wg.Done()
		if _, ref := p.rules.Load().authorize(t.hostName(), t.port, "http"); ref != nil {
			p.refused(*ref)
			http.Error(w, ref.String(), http.StatusForbidden)
			return
		}
		r.URL.Scheme, r.URL.Host = scheme, t.hostPort()
		p.secrets.apply(r, t)
		p.secretFwd.ServeHTTP(w, r)
	})
}

// hostName is the name or address t was checked as.
func (t target) hostName() string {
	if t.name != "" {
		return t.name
	}
	return t.addr.String()
}

// bufConn is a connection read through a bufio.Reader that may hold
// bytes already.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// oneConn is a listener of one connection: Accept returns it once, then
// waits for it to be closed and reports the listener closed, which ends
// an http.Server's Serve.
type oneConn struct {
	c    chan net.Conn
	done chan struct{}
	addr net.Addr
}

func newOneConn(c net.Conn) *oneConn {
	l := &oneConn{c: make(chan net.Conn, 1), done: make(chan struct{}), addr: c.LocalAddr()}
	l.c <- &closeNotify{Conn: c, done: l.done}
	return l
}

func (l *oneConn) Accept() (net.Conn, error) {
	select {
	case c := <-l.c:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.addr }

// closeNotify closes done when it is closed.
type closeNotify struct {
	net.Conn
	once sync.Once
	done chan struct{}
}

func (c *closeNotify) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.done) })
	return err
}
