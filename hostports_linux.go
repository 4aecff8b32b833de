package corral

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/egress"
	"github.com/corralhq/corral/nsjail"
)

// hostAddrs are the addresses a host port is reached at inside on the
// landlock rung, where the command's connections are the init's to make
// (nsjail.Options.ConnectOnly).
func hostAddrs(ports []uint16) []netip.AddrPort {
	var out []netip.AddrPort
	for _, p := range ports {
		out = append(out, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), p), netip.AddrPortFrom(netip.IPv6Loopback(), p))
	}
	return out
}

// hostNetServe is what a command of the full rung with host or published
// ports has served: publish are the host's listeners of its published
// ports, bound before the sandbox is taken (listenPublished).
type hostNetServe struct {
	spec     *spec
	publish  []net.Listener
	fwd      *egress.Forward
	done     chan struct{}
	dialer   *nsjail.Dialer // set by serve, closed by stop
	stopOnce sync.Once
	// said are the published ports whose URL Logf was given.
	mu   sync.Mutex
	said map[netip.AddrPort]bool
}

// listenPublished listens on the host address of each published port, so
// that a port another program holds fails the command before it starts.
func (b *linuxBackend) listenPublished() (*hostNetServe, error) {
	h := &hostNetServe{spec: b.spec, fwd: egress.NewForward(), done: make(chan struct{})}
	for _, p := range b.spec.Publish {
		l, err := net.Listen("tcp", p.host.String())
		if err != nil {
			h.stop()
			if errors.Is(err, syscall.EADDRINUSE) {
				err = errors.New("the host's port is taken by another program")
			} else if errors.Is(err, syscall.EADDRNOTAVAIL) {
				err = errors.New("the host has no such address")
			}
			return nil, &SetupError{Layer: LayerEgress, Path: "publish " + p.host.String(), Err: err}
		}
		h.publish = append(h.publish, l)
	}
	return h, nil
}

// stop ends the serving: nothing listens on the host once it returns.
// Only the first call does anything.
func (h *hostNetServe) stop() {
	h.stopOnce.Do(func() {
		close(h.done)
		closeListeners(h.publish)
		h.fwd.Close()
		if h.dialer != nil {
			h.dialer.Close()
		}
	})
}

// serve takes the files after the proxy's: each host port's listeners,
// then the dialer when ports are published.
func (h *hostNetServe) serve(files []*os.File) error {
	var dialer *nsjail.Dialer
	for _, f := range files {
		if nsjail.IsDialer(f) {
			d, err := nsjail.NewDialer(f)
			if err != nil {
				return err
			}
			dialer, h.dialer = d, d
			continue
		}
		l, err := net.FileListener(f)
		if err != nil {
			return err
		}
		go h.fwd.Serve(l, dialHost, h.unreachable("the host's port"))
	}
	if len(h.publish) == 0 {
		return nil
	}
	if dialer == nil {
		return errors.New("the sandbox has no dialer for its published ports")
	}
	for i, p := range h.spec.Publish {
		go h.fwd.Serve(h.publish[i], func(net.Conn) (net.Conn, error) {
			c, err := dialInside(dialer, p.port)
			if err == nil {
				h.say(p) // it accepts
			}
			return c, err
		}, nil)
	}
	return nil
}

func (h *hostNetServe) unreachable(what string) func(error) {
	if h.spec.logf == nil {
		return nil
	}
	return func(err error) { h.spec.logf("corral: cannot reach %s: %v", what, err) }
}

// dialHost connects to the host's loopback on the port c was accepted on
// inside: on the address of c's family first, then the other, as a
// service may listen on either.
func dialHost(c net.Conn) (net.Conn, error) {
	local, ok := c.LocalAddr().(*net.TCPAddr)
	if !ok {
		return nil, errors.New("not a TCP connection")
	}
	first, second := "127.0.0.1", "::1"
	if local.IP.To4() == nil {
		first, second = second, first
	}
	port := strconv.Itoa(local.Port)
	to, err := net.DialTimeout("tcp", net.JoinHostPort(first, port), 10*time.Second)
	if err != nil {
		var err2 error
		if to, err2 = net.DialTimeout("tcp", net.JoinHostPort(second, port), 10*time.Second); err2 != nil {
			return nil, fmt.Errorf("host port %s: %w", port, err)
		}
	}
	return to, nil
}

// dialInside connects to the command's server on port of the sandbox's
// loopback, 127.0.0.1 first, then [::1], through sockets the sandbox's
// init made in its namespace.
func dialInside(d *nsjail.Dialer, port uint16) (net.Conn, error) {
	var err error
	for _, v6 := range []bool{false, true} {
		var fd int
		if fd, err = d.Socket(v6); err != nil {
			return nil, err
		}
		var sa unix.Sockaddr = &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: int(port)}
		if v6 {
			sa = &unix.SockaddrInet6{Addr: [16]byte{15: 1}, Port: int(port)}
		}
		err = unix.Connect(fd, sa)
		for err == unix.EINTR {
			err = unix.Connect(fd, sa)
		}
		if err != nil {
			unix.Close(fd)
			continue
		}
		f := os.NewFile(uintptr(fd), "published")
		c, err := net.FileConn(f)
		f.Close()
		return c, err
	}
	return nil, os.NewSyscallError("connect", err)
}

// announce tells, through Logf, each published port's URL once the
// command's server listens on its port inside: it reads the listening
// sockets of the init's network namespace (/proc/PID/net/tcp) until then,
// or until the command is done. A connection relayed to the server says
// it too, should it come first.
func (h *hostNetServe) announce(pid int) {
	if h.spec.logf == nil || len(h.spec.Publish) == 0 {
		return
	}
	go func() {
		left := append([]published(nil), h.spec.Publish...)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for len(left) > 0 {
			select {
			case <-h.done:
				return
			case <-tick.C:
			}
			ports := listening(strconv.Itoa(pid))
			var rest []published
			for _, p := range left {
				if ports[p.port] {
					h.say(p)
				} else {
					rest = append(rest, p)
				}
			}
			left = rest
		}
	}()
}

// say gives Logf p's URL, once.
func (h *hostNetServe) say(p published) {
	if h.spec.logf == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.said[p.host] {
		return
	}
	if h.said == nil {
		h.said = map[netip.AddrPort]bool{}
	}
	h.said[p.host] = true
	h.spec.logf("corral: published %s (port %d inside)", p.url(), p.port)
}

// listening are the TCP ports listened on in pid's network namespace, on
// any address.
func listening(pid string) map[uint16]bool {
	ports := map[uint16]bool{}
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open("/proc/" + pid + "/net/" + table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// "  0: 0100007F:1F90 00000000:0000 0A ...": 0A is LISTEN.
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" {
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			if port, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil {
				ports[uint16(port)] = true
			}
		}
		f.Close()
	}
	return ports
}

// serveNet is nsjail's Command.Serve for a sandbox of the full rung with
// NetworkAllow's proxy, host ports or published ports, and what it serves
// besides the proxy; its published ports are listened on already.
func (b *linuxBackend) serveNet(refused func(Violation)) (func([]*os.File, []string) ([]string, func(), error), *hostNetServe, error) {
	h, err := b.listenPublished()
	if err != nil {
		return nil, nil, err
	}
	proxy := b.serve(refused)
	return func(files []*os.File, env []string) ([]string, func(), error) {
		stopProxy := func() {}
		if b.egress != nil {
			var err error
			if env, stopProxy, err = proxy(files, env); err != nil {
				h.stop()
				return nil, nil, err
			}
			files = files[2:]
		}
		if err := h.serve(files); err != nil {
			stopProxy()
			h.stop()
			return nil, nil, err
		}
		return env, func() { h.stop(); stopProxy() }, nil
	}, h, nil
}

// hostServes keeps a refusal unless it is a connection to a port of the
// sandbox's loopback (nsjail.ReasonHostPort) that the host does not
// serve either: only then is the sandbox why it failed, and a host port
// would reach it.
func hostServes(v nsjail.Violation) bool {
	if v.Reason != nsjail.ReasonHostPort {
		return true
	}
	_, port, err := net.SplitHostPort(v.Path)
	if err != nil {
		return false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && listening("self")[uint16(n)]
}
