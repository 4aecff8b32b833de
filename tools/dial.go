package tools

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// DialError reports a connection DialControl refused.
type DialError struct {
	Address string
	Reason  string
}

func (e *DialError) Error() string {
	return fmt.Sprintf("dial %s: refused: %s", e.Address, e.Reason)
}

func (e *DialError) Unwrap() error { return ErrBlockedURL }

// DialControl is a net.Dialer Control function that refuses to connect to a
// blocked address (see BlockedAddr). It runs after name resolution, on the
// address actually being dialed, so a DNS answer that changed since
// URLChecker.Check (DNS rebinding), a redirect to an internal host, or a
// hostname that was never checked cannot reach a blocked address.
func DialControl(network, address string, _ syscall.RawConn) error {
	if !strings.HasPrefix(network, "tcp") && !strings.HasPrefix(network, "udp") {
		return &DialError{Address: address, Reason: fmt.Sprintf("network %q is not tcp or udp", network)}
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return &DialError{Address: address, Reason: "not host:port"}
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return &DialError{Address: address, Reason: "not an IP address"}
	}
	if why, blocked := BlockedAddr(a); blocked {
		return &DialError{Address: address, Reason: fmt.Sprintf("%s is %s", a.WithZone(""), why)}
	}
	return nil
}

// NewTransport returns an http.Transport for fetching pages on a model's
// behalf: its dialer applies DialControl to every connection, including
// those made for redirects, and it ignores proxy settings from the
// environment, since through a proxy the dialer would check the proxy's
// address instead of the destination's.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: DialControl}
	t.DialContext = d.DialContext
	return t
}
