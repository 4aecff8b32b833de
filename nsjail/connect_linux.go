package nsjail

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/guard"
	"github.com/corralhq/corral/seccomp"
)

// A bare sandbox with ConnectOnly (Network=allow on the landlock rung)
// reaches the host's network only through the proxy listening on the
// host's loopback. Landlock's TCP rules name ports, never addresses, so
// they cannot say "127.0.0.1 on this port and nowhere else on it". Here
// they say less: the command may connect nowhere at all, nor bind. Its
// init makes the connections instead: every connect and listen of the
// command stops in the init's listener (seccomp.ConnectProgram), which
//
//   - for an IPv4 or IPv6 socket, copies the address out of the command's
//     memory once, refuses (EACCES, recorded as a refused destination)
//     anything but one of the proxy's addresses, and connects the
//     command's own socket (pidfd_getfd) to the address it copied, from a
//     thread outside the command's Landlock domain, answering with that
//     connect's result: EINPROGRESS for a non-blocking socket, as the
//     kernel would;
//   - for any other socket lets the call go on (a unix or netlink socket
//     connects as the kernel decides). Another thread of the command may
//     swap the descriptor or the address meanwhile; what the kernel then
//     connects is still refused by Landlock if it is TCP. The one
//     connection the command gets to the proxy is always the init's;
//   - refuses a listen on an IPv4 or IPv6 socket that is not bound yet
//     (the kernel would bind it to every address of the host, where
//     Landlock does not look) and makes every other listen itself, on
//     the socket it duplicated: a listen let go on could be swapped to such
//     a socket in between.
//
// MSG_FASTOPEN (a connect inside sendto, sendmsg or sendmmsg, which no
// Landlock rule sees) is refused by the filter itself.

// Why a connection was refused, as Violation.Reason.
const (
	KindNetwork  ViolationKind = "network" // Path is the "address:port"
	ReasonDirect Reason        = "direct"  // not to corral's proxy
	ReasonListen Reason        = "listen"  // a server on every address of the host
)

// sockaddrMax is struct sockaddr_storage's size: the kernel copies no more
// of an address, and refuses a longer one with EINVAL.
const sockaddrMax = 128

// commandWatch is confine's watch: the listener, when the command's
// writes are reported (report), the guard stages what it creates (see
// listens) or its TCP connections are the init's to make
// (setup.ConnectOnly); nil when none.
func commandWatch(s *setup, planted *guard.Session, report bool) func(policy []byte) bool {
	noPtrace = s.NoPtrace
	if listens(s, planted, report) {
		return func(policy []byte) bool {
			s.listener = listen(s, planted, policy, report)
			return s.listener != nil
		}
	}
	if len(s.ConnectOnly) == 0 {
		return nil
	}
	return func(policy []byte) bool {
		s.listener, s.connectErr = listenConnects(s, policy)
		return s.listener != nil
	}
}

// listenConnects loads the policy's filter as it is, followed by the
// connect program, with a listener that serves only the latter.
//
// Preconditions: must be called with the OS thread locked, by confine.
func listenConnects(s *setup, policy []byte) (*listener, error) {
	prog, err := seccomp.Program(policy)
	if err != nil {
		return nil, err
	}
	if prog, err = withConnects(s, prog); err != nil {
		return nil, err
	}
	also := alsoOf(s, false)
	if also.Execs {
		ep, err := seccomp.ExecProgram()
		if err != nil {
			return nil, err
		}
		if prog, err = seccomp.Then(prog, ep); err != nil {
			return nil, err
		}
	}
	fd, err := seccomp.LoadListener(prog)
	if err != nil {
		return nil, err
	}
	l := newListener(fd, nil, judge{})
	l.calls = nil
	l.connectOnly = s.ConnectOnly
	l.answer(s, also)
	go l.run()
	return l, nil
}

// withConnects appends the connect program to prog when the command's
// connections are the init's to make.
func withConnects(s *setup, prog []unix.SockFilter) ([]unix.SockFilter, error) {
	if len(s.ConnectOnly) == 0 {
		return prog, nil
	}
	cp, err := seccomp.ConnectProgram()
	if err != nil {
		return nil, err
	}
	return seccomp.Then(prog, cp)
}

// connectsKept fails when the command's connections should be the init's
// to make and no listener serves them: without one, Landlock would let
// the command connect nowhere at all, which is no sandbox a caller asked
// for.
func connectsKept(s *setup) *failure {
	if len(s.ConnectOnly) == 0 || s.listener != nil && s.listener.connectOnly != nil {
		return nil
	}
	err := s.connectErr
	if err == nil {
		err = errors.New("no listener")
	}
	return failureOf(LayerSeccomp, "", fmt.Errorf("cannot stop connect in a listener, which keeps connections to corral's proxy: %w", err))
}

// serveNet answers a connect or listen the connect program stopped, and
// reports whether n was one.
func (l *listener) serveNet(n seccomp.Notification) bool {
	switch {
	case l.connectOnly == nil && l.loopback && seccomp.IsConnect(n):
		l.serveLoopback(n) // a network namespace of the sandbox's own
	case l.connectOnly == nil:
		return false
	case n.Pid == l.initTid:
		seccomp.Continue(l.fd, n.ID) // the init's own: Landlock decides
	case seccomp.IsConnect(n):
		l.serveConnect(n)
	case seccomp.IsListen(n):
		l.serveListen(n)
	default:
		return false
	}
	return true
}

func (l *listener) serveConnect(n seccomp.Notification) {
	sock, family := l.inetSocket(n)
	if sock < 0 {
		// Not an IPv4 or IPv6 socket, or no descriptor: the kernel
		// decides, and refuses any TCP connect of the command's own.
		seccomp.Continue(l.fd, n.ID)
		return
	}
	dest, errno := l.address(n, family)
	switch {
	case errno == 0 && !dest.IsValid():
		// AF_UNSPEC: dissolves an association, as Landlock allows.
		unix.Close(sock)
		seccomp.Continue(l.fd, n.ID)
	case errno != 0:
		unix.Close(sock)
		seccomp.Fail(l.fd, n.ID, errno)
	case !slices.Contains(l.connectOnly, netip.AddrPortFrom(dest.Addr().Unmap(), dest.Port())):
		unix.Close(sock)
		l.record(Violation{Kind: KindNetwork, Path: dest.String(), Reason: ReasonDirect, Process: comm(n.Pid)})
		seccomp.Fail(l.fd, n.ID, unix.EACCES)
	default:
		// A blocking connect waits for the proxy to accept: on a goroutine
		// of its own, while the listener serves the other calls.
		go func() {
			errno := connectTo(sock, family, dest)
			unix.Close(sock)
			seccomp.Return(l.fd, n.ID, errno)
		}()
	}
}

// connectTo connects sock to dest and returns the errno the command's
// call gets. A blocking connect interrupted by a signal is made again,
// which waits for the first to complete.
func connectTo(sock, family int, dest netip.AddrPort) syscall.Errno {
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: int(dest.Port()), Addr: dest.Addr().Unmap().As4()}
	if family == unix.AF_INET6 {
		sa = &unix.SockaddrInet6{Port: int(dest.Port()), Addr: dest.Addr().As16()}
	}
	err := unix.Connect(sock, sa)
	interrupted := false
	for err == unix.EINTR {
		interrupted = true
		err = unix.Connect(sock, sa)
	}
	if err == nil || interrupted && err == unix.EISCONN {
		return 0
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return unix.ECONNREFUSED
}

func (l *listener) serveListen(n seccomp.Notification) {
	sock, err := getFd(l.fd, n, int(int32(n.Args[0])))
	if err != nil {
		seccomp.Fail(l.fd, n.ID, errnoOf(err))
		return
	}
	defer unix.Close(sock)
	family, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		seccomp.Fail(l.fd, n.ID, errnoOf(err))
		return
	}
	if (family == unix.AF_INET || family == unix.AF_INET6) && !bound(sock) {
		where := "0.0.0.0:*"
		if family == unix.AF_INET6 {
			where = "[::]:*"
		}
		l.record(Violation{Kind: KindNetwork, Path: where, Reason: ReasonListen, Process: comm(n.Pid)})
		seccomp.Fail(l.fd, n.ID, unix.EACCES)
		return
	}
	seccomp.Return(l.fd, n.ID, errnoOf(unix.Listen(sock, int(int32(n.Args[1])))))
}

// bound tells whether sock has a port already: only then does listen
// leave its address alone.
func bound(sock int) bool {
	sa, err := unix.Getsockname(sock)
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return err == nil && sa.Port != 0
	case *unix.SockaddrInet6:
		return err == nil && sa.Port != 0
	}
	return false
}

// inetSocket duplicates the descriptor a connect names when it is an IPv4
// or IPv6 socket, and returns it with its family; -1 otherwise.
func (l *listener) inetSocket(n seccomp.Notification) (int, int) {
	sock, err := getFd(l.fd, n, int(int32(n.Args[0])))
	if err != nil {
		return -1, 0
	}
	family, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil || family != unix.AF_INET && family != unix.AF_INET6 {
		unix.Close(sock)
		return -1, 0
	}
	return sock, family
}

// address copies the address a connect names out of the command's memory,
// once: what the init connects to is this copy, whatever the command's
// threads write there afterwards. An invalid AddrPort with errno 0 is
// AF_UNSPEC; otherwise errno is what the kernel would answer for an
// address it cannot use on a socket of family.
func (l *listener) address(n seccomp.Notification, family int) (netip.AddrPort, syscall.Errno) {
	size := int(int32(n.Args[2]))
	if size < 0 || size > sockaddrMax {
		return netip.AddrPort{}, unix.EINVAL
	}
	buf := make([]byte, size)
	if !readMemory(n.Pid, n.Args[1], buf) || !seccomp.Valid(l.fd, n.ID) {
		return netip.AddrPort{}, unix.EFAULT
	}
	return parseSockaddr(buf, family)
}

// parseSockaddr reads buf as a connect on a TCP socket of family would,
// with the errno the kernel gives an address it cannot use, in the order
// it checks (too short, then another family).
func parseSockaddr(buf []byte, family int) (netip.AddrPort, syscall.Errno) {
	if len(buf) < 2 {
		return netip.AddrPort{}, unix.EINVAL
	}
	af := int(binary.NativeEndian.Uint16(buf))
	if af == unix.AF_UNSPEC {
		return netip.AddrPort{}, 0
	}
	least := 16 // sizeof(struct sockaddr_in)
	if family == unix.AF_INET6 {
		least = 24 // SIN6_LEN_RFC2133: without the scope
	}
	switch {
	case len(buf) < least:
		return netip.AddrPort{}, unix.EINVAL
	case af != family:
		return netip.AddrPort{}, unix.EAFNOSUPPORT
	}
	port := binary.BigEndian.Uint16(buf[2:4])
	if family == unix.AF_INET {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(buf[4:8])), port), 0
	}
	return netip.AddrPortFrom(netip.AddrFrom16([16]byte(buf[8:24])), port), 0
}

// errnoOf is the errno err carries, EACCES when none: a call the init
// could not look at is refused.
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return unix.EACCES
}
