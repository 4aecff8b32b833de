package egress

import (
	"net/netip"

	"github.com/corralhq/corral/internal/netrule"
)

// Connected is one connection the proxy made, told to Options.OnConnect:
// the name or address the client asked for, and the address dialled (the
// zero Addr when an upstream proxy chose it).
type Connected struct {
	Host string
	Port int
	Addr netip.Addr
	// Blocked, with learning rules, says why Addr lies in a range the
	// proxy refuses unless allowed IPs list it ("loopback"); "" when it
	// does not, or is listed.
	Blocked string
}

// Learning returns rules for a run that learns what a command reaches: r's
// denied names are still refused, every other name is allowed, and names
// may resolve into, and IP literals name, any range but the unspecified
// address and a cloud metadata endpoint r does not list itself. What a
// connection would need under stricter rules is for the caller to judge
// from Options.OnConnect.
func (r *Rules) Learning() *Rules {
	l := &Rules{learning: true}
	if r != nil {
		l.allowed, l.denied, l.ips = r.allowed, r.denied, r.ips
	}
	return l
}

// noteConnected tells OnConnect of a connection made to t at a.
func (p *Proxy) noteConnected(t target, a netip.Addr) {
	if p.onConnect == nil {
		return
	}
	c := Connected{Host: t.host, Port: t.port, Addr: a}
	if r := p.rules.Load(); a.IsValid() && r != nil && r.learning {
		strict := *r
		strict.learning = false
		if why, blocked := netrule.BlockedAddr(a); blocked && !strict.inAllowedIPs(a) {
			c.Blocked = why
		}
	}
	p.onConnect(c)
}
