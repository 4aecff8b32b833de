package egress

import (
	"net/netip"
)

// target is a destination a client asked for, checked against the rules.
type target struct {
	host string     // as asked, made printable: for messages
	name string     // the ASCII name to resolve; "" for an address literal
	addr netip.Addr // the address literal, when there is one
	port int
}

// authorize parses a client's host and port and checks them against r.
// The returned target names exactly what the proxy may resolve or dial; a
// non-nil *Refusal says why it may not.
func (r *Rules) authorize(host string, port int, via string) (target, *Refusal) {
	t := target{host: printable(host), port: port}
	refuse := func(reason string) (target, *Refusal) {
		return t, &Refusal{Host: t.host, Port: port, Reason: reason, Via: via}
	}
	if port < 1 || port > 65535 {
		return refuse(reasonBadPort)
	}
	if a, ok := hostAddr(host); ok {
		t.addr, t.host = a, a.String()
		if !r.inAllowedIPs(a) {
			return refuse(reasonIPLiteral)
		}
		return t, nil
	}
	name, err := asciiName(host)
	if err != nil {
		return refuse(reasonNotName)
	}
	t.name, t.host = name, name
	if why := r.checkName(name, port); why != "" {
		return refuse(why)
	}
	return t, nil
}
