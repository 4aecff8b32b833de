package nsjail

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/seccomp"
)

// Host ports and published ports (Options.HostPorts, Options.Publish) go
// the way of the proxy's listeners: the init makes the sockets in the
// sandbox's network namespace and the caller serves them.
//
//   - For each host port the init listens on 127.0.0.1:PORT and, where the
//     namespace has IPv6, [::1]:PORT; the caller accepts there and dials
//     the host's loopback on the same port from its own namespace. No
//     host port is opened, and the command cannot bind those ports itself.
//   - For published ports the init makes a dialer: one end of a unix
//     socket pair, which the caller asks for sockets made in the sandbox's
//     namespace (one byte, 4 or 6, for the family) and gets each back
//     unconnected by SCM_RIGHTS. A socket keeps the namespace it was made
//     in, so the caller connects it to the command's server on the
//     sandbox's loopback. The init's end is served by a goroutine until
//     the caller closes its own. It gives the caller nothing a command
//     could not make for itself.

// hostListeners listens on each port of ports on 127.0.0.1 and [::1] of
// the sandbox's namespace. [::1] is left out where the namespace has no
// IPv6.
func hostListeners(ports []uint16) ([]*os.File, error) {
	var files []*os.File
	for _, port := range ports {
		f, err := listenOn(unix.AF_INET, port, "corral-host-port")
		if err != nil {
			closeFiles(files)
			return nil, err
		}
		files = append(files, f)
		f, err = listenOn(unix.AF_INET6, port, "corral-host-port6")
		switch {
		case errors.Is(err, unix.EAFNOSUPPORT) || errors.Is(err, unix.EADDRNOTAVAIL):
			continue
		case err != nil:
			closeFiles(files)
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// listenOn makes a close-on-exec listening TCP socket on port of the
// loopback address of family.
func listenOn(family int, port uint16, name string) (*os.File, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	var sa unix.Sockaddr = &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: int(port)}
	if family == unix.AF_INET6 {
		sa = &unix.SockaddrInet6{Addr: [16]byte{15: 1}, Port: int(port)}
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("bind", err)
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("listen", err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// newDialer makes the socket pair of a dialer: the caller's end, sent
// with Ready, and the init's, which serveDialer serves.
func newDialer() (caller, own *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	return os.NewFile(uintptr(fds[0]), "corral-dialer"), os.NewFile(uintptr(fds[1]), "corral-dialer-init"), nil
}

// serveDialer answers each request on the init's end of the dialer with a
// new TCP socket of the family asked for, made in the init's network
// namespace, or with the errno that refused it; it returns when the
// caller's end is closed.
func serveDialer(f *os.File) {
	defer f.Close()
	fd := int(f.Fd())
	buf := make([]byte, 1)
	for {
		n, _, _, _, err := unix.Recvmsg(fd, buf, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		family := unix.AF_INET
		if buf[0] == 6 {
			family = unix.AF_INET6
		}
		sock, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			errno, _ := err.(unix.Errno)
			unix.Sendmsg(fd, []byte{byte(errno)}, nil, nil, 0)
			continue
		}
		err = unix.Sendmsg(fd, []byte{0}, unix.UnixRights(sock), nil, 0)
		unix.Close(sock)
		if err != nil {
			return
		}
	}
}

// Dialer makes TCP sockets in a sandbox's network namespace: see
// Options.Publish. It is safe for concurrent use.
type Dialer struct {
	mu sync.Mutex
	f  *os.File
}

// NewDialer serves on a duplicate of f, the dialer a sandbox with
// Options.Publish handed to Command.Serve (the sandbox closes its own
// when released).
func NewDialer(f *os.File) (*Dialer, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	return &Dialer{f: os.NewFile(uintptr(fd), f.Name())}, nil
}

// IsDialer tells whether f, one of the files Command.Serve is given, is
// the dialer rather than a listening TCP socket.
func IsDialer(f *os.File) bool {
	domain, err := unix.GetsockoptInt(int(f.Fd()), unix.SOL_SOCKET, unix.SO_DOMAIN)
	return err == nil && domain == unix.AF_UNIX
}

// Socket returns a new, unconnected, close-on-exec TCP socket of the
// sandbox's namespace: IPv6 when v6, else IPv4.
func (d *Dialer) Socket(v6 bool) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	req := []byte{4}
	if v6 {
		req[0] = 6
	}
	fd := int(d.f.Fd())
	if err := unix.Sendmsg(fd, req, nil, nil, 0); err != nil {
		return -1, os.NewSyscallError("sendmsg", err)
	}
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	for err == unix.EINTR {
		n, oobn, _, _, err = unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	}
	if err != nil {
		return -1, os.NewSyscallError("recvmsg", err)
	}
	if n == 0 {
		return -1, errors.New("the sandbox is gone")
	}
	if buf[0] != 0 {
		return -1, os.NewSyscallError("socket", unix.Errno(buf[0]))
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, errors.New("the sandbox sent no socket")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, errors.New("the sandbox sent no socket")
	}
	return fds[0], nil
}

// Close closes the caller's end: the init's goroutine then ends.
func (d *Dialer) Close() error { return d.f.Close() }

// netListeners makes the sockets the caller serves, in the order
// Command.Serve gets them: the proxy's two, the host ports' listeners,
// the dialer. The host ports are bound first, so that the proxy's ports,
// which the kernel picks, never take one.
func netListeners(s *setup) *failure {
	if len(s.HostPorts) == 0 && !s.NetProxy && !s.Dialer {
		return nil
	}
	if !s.NetNone && !s.NetProxy {
		return failureOf(LayerNetNS, "", errors.New("host ports and published ports need a network namespace"))
	}
	hosts, err := hostListeners(s.HostPorts)
	if err != nil {
		return failureOf(LayerNetNS, "127.0.0.1", err)
	}
	var files []*os.File
	if s.NetProxy {
		if files, err = proxyListeners(); err != nil {
			closeFiles(hosts)
			return failureOf(LayerNetNS, "127.0.0.1", err)
		}
	}
	files = append(files, hosts...)
	if s.Dialer {
		caller, own, err := newDialer()
		if err != nil {
			closeFiles(files)
			return failureOf(LayerNetNS, "", err)
		}
		files, s.dialer = append(files, caller), own
	}
	s.listeners = files
	return nil
}

// ReasonHostPort: a TCP connection to a port of the sandbox's loopback
// where nothing listens (Path is the "address:port"). The caller reports
// it when the host has a service there, which a host port would reach.
const ReasonHostPort Reason = "host port"

// watchesLoopback tells whether the report listener stops every connect
// to look for ReasonHostPort: with a report asked for, in a network
// namespace of the sandbox's own.
func watchesLoopback(s *setup, report bool) bool {
	return report && !s.Bare && (s.NetNone || s.NetProxy) && len(s.ConnectOnly) == 0
}

// withLoopbackWatch appends seccomp.ConnectWatchProgram to prog.
func withLoopbackWatch(prog []unix.SockFilter) ([]unix.SockFilter, error) {
	cp, err := seccomp.ConnectWatchProgram()
	if err != nil {
		return nil, err
	}
	return seccomp.Then(prog, cp)
}

// serveLoopback looks at a connect the connect watch stopped and lets it
// go on: it never decides. A TCP connection to a port of 127.0.0.1 or
// [::1] where nothing listens in the namespace (read from the
// namespace's own /proc/net/tcp) is recorded as ReasonHostPort; the
// address is read once, and a command rewriting it meanwhile misreports
// itself only.
func (l *listener) serveLoopback(n seccomp.Notification) {
	defer seccomp.Continue(l.fd, n.ID)
	if n.Pid == l.initTid {
		return
	}
	sock, family := l.inetSocket(n)
	if sock < 0 {
		return
	}
	typ, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	unix.Close(sock)
	if err != nil || typ != unix.SOCK_STREAM {
		return
	}
	dest, errno := l.address(n, family)
	if errno != 0 || !dest.IsValid() {
		return
	}
	if a := dest.Addr().Unmap(); a != netip.AddrFrom4([4]byte{127, 0, 0, 1}) && a != netip.IPv6Loopback() {
		return // no host port is reached there
	}
	if listensInside(dest.Port()) {
		return
	}
	l.record(Violation{Kind: KindNetwork, Path: dest.String(), Reason: ReasonHostPort, Process: comm(n.Pid)})
}

// listensInside tells whether a TCP socket of the init's network
// namespace listens on port, on any address.
func listensInside(port uint16) bool {
	want := fmt.Sprintf(":%04X ", port)
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			return true // cannot tell: nothing is recorded
		}
		for line := range strings.Lines(string(data)) {
			// "  0: 0100007F:1F90 00000000:0000 0A ...": 0A is LISTEN.
			fields := strings.Fields(line)
			if len(fields) > 3 && fields[3] == "0A" && strings.HasSuffix(fields[1]+" ", want) {
				return true
			}
		}
	}
	return false
}
