package egress

import (
	"fmt"
	"net"
	"strconv"
)

// Refusal is one connection the proxy refused.
type Refusal struct {
	Host   string // the name or address the client asked for
	Port   int
	Reason string // why, in words a model can act on: "not in allowed domains"
	Via    string // "http" or "socks5"
}

// String is the line the client is answered with and the caller logs:
// "corral: blocked evil.example:443 (not in allowed domains)".
func (r Refusal) String() string {
	return fmt.Sprintf("corral: blocked %s (%s)", net.JoinHostPort(r.Host, strconv.Itoa(r.Port)), r.Reason)
}

// refusalError carries a Refusal out of the dialling code.
type refusalError struct{ r Refusal }

func (e *refusalError) Error() string { return e.r.String() }
