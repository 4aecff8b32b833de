package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// link is a connection to a destination, and any bytes of the
// destination's already read from it (an upstream proxy's answer to
// CONNECT can arrive together with a server's first bytes).
type link struct {
	conn    net.Conn
	pending []byte
}

// resolveError is a name that could not be resolved: a failure, not a
// refusal.
type resolveError struct {
	name string
	err  error
}

func (e *resolveError) Error() string { return fmt.Sprintf("resolve %s: %v", e.name, e.err) }
func (e *resolveError) Unwrap() error { return e.err }

// connect makes the connection to t, which rules allowed: directly to an
// address it resolves and checks itself, or through the upstream proxy
// when there is one for t, once every address t resolves to here passed
// the same check. A refusal is a *refusalError.
func (p *Proxy) connect(ctx context.Context, rules *Rules, t target, via string) (*link, error) {
	// One bound for the lookup and every attempt: an injected resolver
	// has no timeout of its own.
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	chained := p.upstream.use(t)
	addrs, err := p.addrs(ctx, rules, t, via, chained)
	if err != nil {
		return nil, err
	}
	if chained {
		l, err := p.upstream.connect(ctx, &p.dialer, t)
		if err == nil {
			p.noteConnected(t, netip.Addr{})
		}
		return l, err
	}
	var first error
	for _, a := range addrs {
		c, err := p.dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(t.port)).String())
		if err == nil {
			p.noteConnected(t, a)
			return &link{conn: c}, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// addrs returns the addresses t may be dialled at: its literal, or what
// its name resolves to, once, without those the rules refuse. This is
// the check against DNS rebinding: it is made on the addresses that are
// then dialled, not on an earlier answer. With all, t is refused when
// the rules refuse any one of its addresses: an upstream proxy picks
// among them itself.
func (p *Proxy) addrs(ctx context.Context, rules *Rules, t target, via string, all bool) ([]netip.Addr, error) {
	got := []netip.Addr{t.addr}
	if t.name != "" {
		var err error
		if got, err = p.resolve(ctx, t.name); err != nil {
			return nil, &resolveError{t.name, err}
		}
		if len(got) == 0 {
			return nil, &resolveError{t.name, fmt.Errorf("no addresses")}
		}
	}
	var ok []netip.Addr
	why := ""
	for _, a := range got {
		a = a.Unmap()
		if w := rules.checkAddr(a); w != "" {
			if why == "" {
				why = fmt.Sprintf("%s is %s", a, w)
				if t.name != "" {
					why = fmt.Sprintf("resolves to %s, which is %s", a, w)
				}
			}
			continue
		}
		ok = append(ok, a)
	}
	if len(ok) == 0 || all && why != "" {
		if all && len(ok) > 0 {
			why += ", and the upstream proxy would choose among its addresses itself"
		}
		return nil, &refusalError{Refusal{Host: t.host, Port: t.port, Reason: why, Via: via}}
	}
	return ok, nil
}

// hostPort is t as "host:port", the form a proxy request names it in.
func (t target) hostPort() string {
	h := t.name
	if h == "" {
		h = t.addr.String()
	}
	return net.JoinHostPort(h, strconv.Itoa(t.port))
}
