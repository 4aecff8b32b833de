package egress

import (
	"io"
	"net"
	"time"
)

// relay copies bytes both ways between a client and a destination until
// both directions have ended, then closes both. toServer and toClient are
// bytes already read from one side, delivered first. Between two
// *net.TCPConn copyConn splices: the kernel moves the bytes, and the
// proxy's CPU per byte stays near none.
func (p *Proxy) relay(client, server net.Conn, toServer, toClient []byte) {
	defer p.closeConn(client)
	defer p.closeConn(server)
	done := make(chan struct{})
	if !p.start(func() {
		defer close(done)
		pipe(server, client, toServer)
	}) {
		return
	}
	pipe(client, server, toClient)
	<-done
}

// pipe writes first, then copies src to dst until src ends, then
// half-closes dst so its peer sees the end too. On an error it closes both,
// which ends the other direction as well.
func pipe(dst, src net.Conn, first []byte) {
	if len(first) > 0 {
		if _, err := dst.Write(first); err != nil {
			dst.Close()
			src.Close()
			return
		}
	}
	if _, err := copyConn(dst, src); err != nil {
		dst.Close()
		src.Close()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	dst.Close()
	src.Close()
}

// hangUp ends a client connection after a final answer: it half-closes,
// then reads what the client still sends for a moment before closing.
// Closing a socket with unread bytes in it sends a reset, and a reset can
// destroy the answer before the client reads it.
func (p *Proxy) hangUp(c net.Conn) {
	defer p.closeConn(c)
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(time.Second))
	io.Copy(io.Discard, io.LimitReader(c, 1<<16))
}
