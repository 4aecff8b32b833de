package egress

import (
	"errors"
	"net"
	"sync"
)

// Forward relays each connection accepted on its listeners to a
// connection its dial function makes: a sandbox's host ports (accepted
// inside the sandbox's network namespace, dialled on the host's loopback)
// and published ports (accepted on the host, dialled to the command's
// server inside). Bytes move as the proxy's tunnels move them: spliced
// between two *net.TCPConn. Close ends every listener and connection.
type Forward struct {
	mu     sync.Mutex
	closed bool
	ls     map[net.Listener]struct{}
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewForward returns a Forward serving nothing yet.
func NewForward() *Forward {
	return &Forward{ls: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{}}
}

// ErrForwardClosed is what Serve returns once the Forward is closed.
var ErrForwardClosed = errors.New("egress: forward closed")

// Serve accepts on l until l fails or f is closed, relaying each
// connection to the one dial makes for it; a connection dial cannot make
// for is closed, after onFail (when set) is told why. l is closed when
// Serve returns.
func (f *Forward) Serve(l net.Listener, dial func(accepted net.Conn) (net.Conn, error), onFail func(error)) error {
	if !f.add(l, nil) {
		l.Close()
		return ErrForwardClosed
	}
	defer f.remove(l, nil)
	defer l.Close()
	for {
		c, err := l.Accept()
		if err != nil {
			if f.isClosed() {
				return ErrForwardClosed
			}
			if isTemporary(err) {
				continue
			}
			return err
		}
		if !f.accepted(c) {
			c.Close()
			return ErrForwardClosed
		}
		go func() {
			defer f.wg.Done()
			defer f.remove(nil, c)
			to, err := dial(c)
			if err != nil {
				c.Close()
				if onFail != nil {
					onFail(err)
				}
				return
			}
			if !f.add(nil, to) {
				c.Close()
				to.Close()
				return
			}
			defer f.remove(nil, to)
			f.relay(c, to)
		}()
	}
}

// relay copies both ways until both directions have ended, then closes
// both connections.
func (f *Forward) relay(a, b net.Conn) {
	defer a.Close()
	defer b.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pipe(b, a, nil)
	}()
	pipe(a, b, nil)
	<-done
}

func (f *Forward) add(l net.Listener, c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	if l != nil {
		f.ls[l] = struct{}{}
	}
	if c != nil {
		f.conns[c] = struct{}{}
	}
	return true
}

// accepted adds c and counts its relay, unless f is closed.
func (f *Forward) accepted(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.conns[c] = struct{}{}
	f.wg.Add(1)
	return true
}

func (f *Forward) remove(l net.Listener, c net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ls, l)
	delete(f.conns, c)
}

func (f *Forward) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// Close closes every listener and connection and waits until the relays
// have ended: nothing listens, and no byte moves, once it returns.
func (f *Forward) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	for l := range f.ls {
		l.Close()
	}
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	return nil
}
