package egress

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
)

// Options configures a Proxy.
type Options struct {
	Rules *Rules
	// Resolve looks up a name; nil uses net.DefaultResolver. Tests inject
	// a map of names to loopback addresses.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Upstream, when set, is a proxy that allowed connections are made
	// through (CONNECT chaining); FromEnvironment fills it from the
	// caller's HTTPS_PROXY/HTTP_PROXY. Its scheme is http or https; user
	// information in it is sent to it as Basic proxy authorization, and
	// never to a destination.
	Upstream *url.URL
	// NoUpstream lists, in NO_PROXY syntax ("example.com,.internal,
	// 10.0.0.0/8"), destinations reached directly even when Upstream is
	// set. Loopback destinations always are.
	NoUpstream string
	// Credential, when set, is a secret every client must give: HTTP
	// clients as the password of Basic proxy authorization (a proxy URL
	// "http://corral:CREDENTIAL@127.0.0.1:PORT" makes curl, git, pip,
	// npm and Go's clients send it), SOCKS5 clients as the password of
	// username/password authentication. A client without it is answered
	// 407 (SOCKS5: authentication failure) and nothing it asked for is
	// reported. The credential never leaves the proxy. For a proxy on a
	// listener others can reach too, such as the host's loopback;
	// NewCredential makes one.
	Credential string
	// OnRefusal, when set, is called for every refused connection, from
	// the goroutine serving it. It must not call Close.
	OnRefusal func(Refusal)
	// OnUnreachable, when set, is called once per host and port for a
	// connection the rules allow that could not be made (a name that does
	// not resolve, an address that refuses), from the connection's
	// goroutine. A client of the HTTP proxy gets the reason in its 502's
	// body; through CONNECT (HTTPS) and SOCKS5 most clients show none of it.
	OnUnreachable func(host string, port int, err error)
	// OnConnect, when set, is called for every connection made to a
	// destination, from the connection's goroutine (see Rules.Learning).
	OnConnect func(Connected)
	// MaxConns caps the client connections open at once, HTTP and SOCKS5
	// together, idle ones included: each costs the caller a descriptor,
	// and a tunnel a second. One over the cap is refused (see Refusals in
	// the package doc). 0 takes DefaultMaxConns; a negative value sets no
	// cap.
	MaxConns int
	// Secrets, when set, has the proxy add credentials the command never
	// holds to its requests to some destinations (see Secrets in the
	// package doc).
	Secrets *SecretOptions
}

// Proxy serves the HTTP and SOCKS5 proxies on listeners it is given.
type Proxy struct {
	rules     atomic.Pointer[Rules]
	resolve   func(ctx context.Context, host string) ([]netip.Addr, error)
	upstream  *upstream
	onRefusal func(Refusal)
	onConnect func(Connected)

	onUnreachable func(host string, port int, err error)
	unreachable   map[string]bool // host:port told to onUnreachable (under mu)
	dialer        net.Dialer
	// credential every client must give, or "" (Options.Credential).
	credential string
	maxConns   int // 0: no cap

	// secrets, h2 and secretFwd serve the destinations that carry a
	// secret (secrets.go, mitm.go); nil without secrets.
	secrets   *secretSet
	h2        *http2.Server
	secretFwd http.Handler

	ctx    context.Context // cancelled by Close: ends lookups and dials
	cancel context.CancelFunc
	http   *http.Server
	trans  *http.Transport // plain HTTP requests
	fwd    http.Handler

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	clients   map[net.Conn]struct{} // counted against maxConns
	refusing  int                   // connections over the cap being answered
	wg        sync.WaitGroup        // every goroutine the proxy starts
}

// dialTimeout bounds one connection attempt; handshakeTimeout bounds a
// SOCKS5 client's greeting and request and an HTTP client's headers.
const (
	dialTimeout      = 30 * time.Second
	handshakeTimeout = 30 * time.Second
)

// New returns a Proxy with the given options.
func New(o Options) (*Proxy, error) {
	up, err := newUpstream(o.Upstream, o.NoUpstream)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		resolve:       o.Resolve,
		upstream:      up,
		onRefusal:     o.OnRefusal,
		onConnect:     o.OnConnect,
		onUnreachable: o.OnUnreachable, unreachable: map[string]bool{},
		credential: o.Credential,
		dialer:     net.Dialer{Timeout: dialTimeout},
		ctx:        ctx,
		cancel:     cancel,
		listeners:  map[net.Listener]struct{}{},
		conns:      map[net.Conn]struct{}{},
		clients:    map[net.Conn]struct{}{},
	}
	switch {
	case o.MaxConns == 0:
		p.maxConns = DefaultMaxConns
	case o.MaxConns > 0:
		p.maxConns = o.MaxConns
	}
	if p.resolve == nil {
		p.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	p.rules.Store(o.Rules)
	p.trans = p.newTransport()
	p.fwd = p.forwarder()
	if p.secrets, err = newSecretSet(o.Secrets); err != nil {
		cancel()
		return nil, err
	}
	if p.secrets != nil {
		if err := p.setupSecrets(o.Secrets); err != nil {
			cancel()
			return nil, err
		}
	}
	p.http = &http.Server{
		Handler:           http.HandlerFunc(p.serveHTTP),
		ReadHeaderTimeout: handshakeTimeout,
		IdleTimeout:       5 * time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ConnState:         p.connState,
	}
	return p, nil
}

// SetRules replaces the rules; connections accepted from then on use them.
// So does every plain HTTP request from then on, also on a keep-alive
// connection. Idle connections to destinations are dropped, so their
// addresses are checked again under the new rules; one busy at that
// moment may carry later requests to the same host:port when the new
// rules still allow that name.
func (p *Proxy) SetRules(r *Rules) {
	p.rules.Store(r)
	p.trans.CloseIdleConnections()
}

// ServeHTTPProxy accepts HTTP proxy clients (CONNECT and absolute-form
// requests) on l until l is closed or the Proxy is.
func (p *Proxy) ServeHTTPProxy(l net.Listener) error {
	if !p.addListener(l) {
		return nil
	}
	defer p.removeListener(l)
	err := p.http.Serve(capListener{Listener: l, p: p})
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// ServeSOCKS5 accepts SOCKS5 clients (CONNECT, with names resolved by the
// proxy) on l until l is closed or the Proxy is.
func (p *Proxy) ServeSOCKS5(l net.Listener) error {
	if !p.addListener(l) {
		return nil
	}
	defer p.removeListener(l)
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if p.isClosed() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Out of descriptors and the like: wait and retry, as
			// net/http does, rather than stop serving.
			if ne, ok := err.(net.Error); ok && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		if !p.admit(c) {
			p.refuseOver(c, "socks5")
			continue
		}
		if !p.addConn(c) || !p.start(func() { p.serveSOCKS5(c) }) {
			p.closeConn(c)
			return nil
		}
	}
}

// Close stops serving and closes every connection in flight. It returns
// when every goroutine the Proxy started has ended.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for l := range p.listeners {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cancel()
	// The listeners are closed already: the server's closing them again
	// is no error.
	err := p.http.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	p.trans.CloseIdleConnections()
	p.wg.Wait()
	return err
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// start runs f in a goroutine Close waits for, unless the Proxy is closed.
func (p *Proxy) start(f func()) bool {
	if !p.enter() {
		return false
	}
	go func() {
		defer p.wg.Done()
		f()
	}()
	return true
}

// enter counts the calling goroutine as one Close waits for; the caller
// calls p.wg.Done when it ends. It fails once the Proxy is closed.
func (p *Proxy) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.wg.Add(1)
	return true
}

func (p *Proxy) addListener(l net.Listener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		l.Close()
		return false
	}
	p.listeners[l] = struct{}{}
	return true
}

func (p *Proxy) removeListener(l net.Listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.listeners, l)
}

// addConn tracks c so that Close closes it; it fails, leaving c to the
// caller, once the Proxy is closed.
func (p *Proxy) addConn(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// closeConn closes c and stops tracking and counting it.
func (p *Proxy) closeConn(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.clients, c)
	p.mu.Unlock()
	c.Close()
}

// cannotReach tells the caller, once per host and port, that t could not be
// reached for err.
func (p *Proxy) cannotReach(t target, err error) {
	if p.onUnreachable == nil {
		return
	}
	key := t.hostPort()
	p.mu.Lock()
	told := p.unreachable[key] || len(p.unreachable) >= maxUnreachable
	p.unreachable[key] = true
	p.mu.Unlock()
	if !told {
		p.onUnreachable(t.host, t.port, err)
	}
}

// maxUnreachable bounds the hosts cannotReach remembers: the command
// chooses them.
const maxUnreachable = 256

// refused reports r to the caller.
func (p *Proxy) refused(r Refusal) {
	if p.onRefusal != nil {
		p.onRefusal(r)
	}
}

func isTemporary(err error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}
