package egress

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"time"
)

// DefaultMaxConns is the cap on a proxy's client connections when
// Options.MaxConns is 0: far above what package managers, git and browsers
// open at once (tens), low enough that a command opening connections in a
// loop cannot take all of the caller's descriptors.
const DefaultMaxConns = 256

// Connections over the cap are answered with a refusal, which needs the
// request read, so they hold a descriptor a moment too: at most
// maxRefusing at once, each for at most refuseTimeout. Beyond that they
// are closed unanswered.
const (
	maxRefusing   = 32
	refuseTimeout = 5 * time.Second
)

// reasonTooMany is the refusal's reason for a connection over the cap.
func reasonTooMany(max int) string {
	return fmt.Sprintf("over the limit of %d connections open through the proxy at once", max)
}

// capListener admits the connections l accepts against the proxy's cap,
// and answers those over it itself. It returns admitted connections as
// they are, so that a tunnel between two *net.TCPConn still splices.
type capListener struct {
	net.Listener
	p *Proxy
}

func (l capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.p.admit(c) {
			return c, nil
		}
		l.p.refuseOver(c, "http")
	}
}

// admit counts c, a new client connection, against the cap; it fails when
// the proxy holds as many as the cap allows. The count drops when c is
// closed (release).
func (p *Proxy) admit(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.maxConns > 0 && len(p.clients) >= p.maxConns {
		return false
	}
	p.clients[c] = struct{}{}
	return true
}

// release stops counting c; it may be called more than once.
func (p *Proxy) release(c net.Conn) {
	p.mu.Lock()
	delete(p.clients, c)
	p.mu.Unlock()
}

// connState releases the HTTP side's connections the server closes; the
// ones it hands over (CONNECT) are released when the proxy closes them.
func (p *Proxy) connState(c net.Conn, s http.ConnState) {
	if s == http.StateClosed {
		p.release(c)
	}
}

// refuseOver answers c, a connection over the cap, with a refusal that
// names what it asked for, then closes it.
func (p *Proxy) refuseOver(c net.Conn, via string) {
	if !p.enterRefusing() {
		c.Close()
		return
	}
	if !p.addConn(c) {
		p.leaveRefusing()
		c.Close()
		return
	}
	if !p.start(func() {
		defer p.leaveRefusing()
		defer p.hangUp(c)
		c.SetDeadline(time.Now().Add(refuseTimeout))
		if via == "socks5" {
			p.refuseSOCKS5Over(c)
		} else {
			p.refuseHTTPOver(c)
		}
	}) {
		p.leaveRefusing()
		p.closeConn(c)
	}
}

// enterRefusing counts one more connection being refused over the cap,
// unless maxRefusing are already.
func (p *Proxy) enterRefusing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refusing >= maxRefusing {
		return false
	}
	p.refusing++
	return true
}

func (p *Proxy) leaveRefusing() {
	p.mu.Lock()
	p.refusing--
	p.mu.Unlock()
}

// overRefusal is the refusal for host:port asked over the cap: the rules'
// own when they refuse it anyway, which says more.
func (p *Proxy) overRefusal(host string, port int, via string) Refusal {
	if _, ref := p.rules.Load().authorize(host, port, via); ref != nil {
		return *ref
	}
	return Refusal{Host: printable(host), Port: port, Reason: reasonTooMany(p.maxConns), Via: via}
}

// refuseHTTPOver reads one request and answers it 403 with the refusal.
// A request it cannot read is answered nothing: it asked for nothing; one
// without the proxy's credential is answered 407, unreported.
func (p *Proxy) refuseHTTPOver(c net.Conn) {
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	if !p.proxyAuthorized(req.Header) {
		write407(c)
		return
	}
	host, port, ok := splitHostPort(req.Host, 0)
	if req.Method != http.MethodConnect {
		host, port, ok = splitHostPort(req.URL.Host, 80)
	}
	if !ok {
		return
	}
	r := p.overRefusal(host, port, "http")
	p.refused(r)
	write403(c, r.String())
}

// refuseSOCKS5Over reads the greeting and the request and answers "not
// allowed by ruleset".
func (p *Proxy) refuseSOCKS5Over(c net.Conn) {
	req, err := p.socksHandshake(c)
	if err != nil {
		return
	}
	p.refused(p.overRefusal(req.host, req.port, "socks5"))
	socksAnswer(c, replyNotAllowed)
}
