package egress

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// SOCKS5 (RFC 1928) constants.
const (
	socksVersion = 5

	socksNoAuth       = 0x00
	socksUserPass     = 0x02
	socksNoAcceptable = 0xff

	socksConnect      = 0x01
	socksBind         = 0x02
	socksUDPAssociate = 0x03

	socksIPv4   = 0x01
	socksDomain = 0x03
	socksIPv6   = 0x04
)

// socksReply is a SOCKS5 reply code.
type socksReply byte

const (
	replySucceeded          socksReply = 0x00
	replyGeneralFailure     socksReply = 0x01
	replyNotAllowed         socksReply = 0x02 // connection not allowed by ruleset
	replyNetworkUnreachable socksReply = 0x03
	replyHostUnreachable    socksReply = 0x04
	replyConnectionRefused  socksReply = 0x05
	replyTTLExpired         socksReply = 0x06
	replyCommandUnsupported socksReply = 0x07
	replyAddressUnsupported socksReply = 0x08
)

// socksRequest is a client's request: its command and destination.
type socksRequest struct {
	cmd  byte
	host string
	port int
}

// serveSOCKS5 serves one SOCKS5 client: CONNECT only, without
// authentication or with the proxy's credential as the password.
func (p *Proxy) serveSOCKS5(c net.Conn) {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	req, err := p.socksHandshake(c)
	if err != nil {
		p.hangUp(c)
		return
	}
	if t, ok := p.socksSecret(req); ok {
		if socksAnswer(c, replySucceeded) != nil {
			p.closeConn(c)
			return
		}
		c.SetDeadline(time.Time{})
		p.intercept(c, nil, t)
		return
	}
	l, code := p.socksConnect(c, req)
	if code != replySucceeded {
		socksAnswer(c, code)
		p.hangUp(c)
		return
	}
	if !p.addConn(l.conn) {
		l.conn.Close()
		p.closeConn(c)
		return
	}
	if socksAnswer(c, replySucceeded) != nil {
		p.closeConn(l.conn)
		p.closeConn(c)
		return
	}
	c.SetDeadline(time.Time{})
	p.relay(c, l.conn, nil, l.pending)
}

// socksConnect checks and makes the connection a request asks for, and
// returns the reply code for it.
func (p *Proxy) socksConnect(c net.Conn, req socksRequest) (*link, socksReply) {
	if req.cmd != socksConnect {
		what := map[byte]string{socksBind: "BIND", socksUDPAssociate: "UDP ASSOCIATE"}[req.cmd]
		if what == "" {
			what = "an unknown command"
		}
		p.refused(Refusal{Host: printable(req.host), Port: req.port, Reason: "SOCKS5 " + what + " is not supported, only CONNECT", Via: "socks5"})
		return nil, replyCommandUnsupported
	}
	rules := p.rules.Load()
	t, ref := rules.authorize(req.host, req.port, "socks5")
	if ref != nil {
		p.refused(*ref)
		return nil, replyNotAllowed
	}
	l, err := p.connect(p.ctx, rules, t, "socks5")
	if err != nil {
		var re *refusalError
		if errors.As(err, &re) {
			p.refused(re.r)
			return nil, replyNotAllowed
		}
		p.cannotReach(t, err)
		return nil, socksFailure(err)
	}
	return l, replySucceeded
}

// socksHandshake reads the greeting, agrees on no authentication, or on
// username/password when the proxy has a credential, which it checks, and
// reads the request. It answers a client that offers no acceptable
// method, gives a wrong password or asks for an unknown address type
// itself.
func (p *Proxy) socksHandshake(c net.Conn) (socksRequest, error) {
	var req socksRequest
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return req, err
	}
	if hdr[0] != socksVersion {
		return req, errors.New("not SOCKS5")
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return req, err
	}
	method := byte(socksNoAuth)
	if p.credential != "" {
		method = socksUserPass
	}
	if !contains(methods, method) {
		c.Write([]byte{socksVersion, socksNoAcceptable})
		return req, errors.New("no acceptable method")
	}
	if _, err := c.Write([]byte{socksVersion, method}); err != nil {
		return req, err
	}
	if method == socksUserPass {
		if err := p.socksUserPass(c); err != nil {
			return req, err
		}
	}
	var rh [4]byte
	if _, err := io.ReadFull(c, rh[:]); err != nil {
		return req, err
	}
	if rh[0] != socksVersion {
		return req, errors.New("not SOCKS5")
	}
	req.cmd = rh[1]
	host, err := socksAddr(c, rh[3])
	if err != nil {
		socksAnswer(c, replyAddressUnsupported)
		return req, err
	}
	var pb [2]byte
	if _, err := io.ReadFull(c, pb[:]); err != nil {
		return req, err
	}
	req.host, req.port = host, int(binary.BigEndian.Uint16(pb[:]))
	return req, nil
}

// socksAddr reads a destination address of type atyp.
func socksAddr(r io.Reader, atyp byte) (string, error) {
	switch atyp {
	case socksIPv4:
		var b [4]byte
		_, err := io.ReadFull(r, b[:])
		return netip.AddrFrom4(b).String(), err
	case socksIPv6:
		var b [16]byte
		_, err := io.ReadFull(r, b[:])
		return netip.AddrFrom16(b).String(), err
	case socksDomain:
		var n [1]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return "", err
		}
		b := make([]byte, n[0])
		_, err := io.ReadFull(r, b)
		return string(b), err
	}
	return "", errors.New("unknown address type")
}

// socksAnswer sends a reply. The bound address is always 0.0.0.0:0: the
// client has no use for the caller's own address, and is not told it.
func socksAnswer(c net.Conn, code socksReply) error {
	_, err := c.Write([]byte{socksVersion, byte(code), 0, socksIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

// socksFailure maps a failure to connect to its SOCKS5 reply code.
func socksFailure(err error) socksReply {
	var re *resolveError
	switch {
	case errors.As(err, &re):
		return replyHostUnreachable
	case errors.Is(err, syscall.ECONNREFUSED):
		return replyConnectionRefused
	case errors.Is(err, syscall.ENETUNREACH):
		return replyNetworkUnreachable
	case errors.Is(err, syscall.EHOSTUNREACH):
		return replyHostUnreachable
	case errors.Is(err, os.ErrDeadlineExceeded):
		return replyTTLExpired
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return replyTTLExpired
	}
	return replyGeneralFailure
}

func contains(b []byte, v byte) bool {
	for _, x := range b {
		if x == v {
			return true
		}
	}
	return false
}
