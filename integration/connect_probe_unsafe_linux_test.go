package integration

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The connect probe runs as a role of the test binary, inside a sandbox or
// on the host (the control). CORRAL_TEST_TARGETS lists "address:port"s;
// CORRAL_TEST_PROBE says what to try on each:
//
//   - connect: a blocking connect, printing "target errno" ("ok" when it
//     connected, then "peer" and the address it is connected to);
//   - fastopen: sendto with MSG_FASTOPEN, the connect hidden in a send;
//   - listen: listen on a fresh, unbound socket (the kernel binds it to
//     every address), the target unused;
//   - race: connects to the first target while another thread flips the
//     address in memory between the two targets (same port), printing
//     how many connected to each;
//   - swap: connects to the last target through a descriptor number that
//     another thread flips between a unix socket and a TCP one, printing
//     how many TCP sockets got connected.
const (
	probeModeEnv    = "CORRAL_TEST_PROBE"
	probeTargetsEnv = "CORRAL_TEST_TARGETS"
)

// raceRounds is how many connects the race makes.
const raceRounds = 300

func runConnectProbe() int {
	var targets []netip.AddrPort
	for _, s := range strings.Split(os.Getenv(probeTargetsEnv), ",") {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		targets = append(targets, ap)
	}
	switch os.Getenv(probeModeEnv) {
	case "connect":
		for _, t := range targets {
			fmt.Println(t, probeConnect(t, false))
		}
	case "fastopen":
		for _, t := range targets {
			fmt.Println(t, probeConnect(t, true))
		}
	case "listen":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err == nil {
			err = unix.Listen(fd, 1)
		}
		fmt.Println("listen", errnoWord(err))
	case "race":
		fmt.Println(probeRace(targets[0], targets[1]))
	case "swap":
		fmt.Println(probeSwap(targets[len(targets)-1]))
	default:
		return 2
	}
	return 0
}

// sockaddr4 is a struct sockaddr_in in memory the probe controls: the
// race rewrites its address while a connect uses it.
type sockaddr4 struct {
	family uint16
	port   [2]byte
	addr   uint32 // network order, as bytes in memory
	zero   [8]byte
}

func newSockaddr4(t netip.AddrPort) *sockaddr4 {
	sa := &sockaddr4{family: unix.AF_INET}
	binary.BigEndian.PutUint16(sa.port[:], t.Port())
	sa.addr = addrWord(t)
	return sa
}

func addrWord(t netip.AddrPort) uint32 {
	a := t.Addr().As4()
	return binary.NativeEndian.Uint32(a[:])
}

// rawConnect is connect(2) on sa as it is in memory when the kernel (or
// a listener) reads it.
func rawConnect(fd int, sa *sockaddr4) error {
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(sa)), unsafe.Sizeof(*sa))
	if e != 0 {
		return e
	}
	return nil
}

func probeConnect(t netip.AddrPort, fastOpen bool) string {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		return errnoWord(err)
	}
	defer unix.Close(fd)
	if fastOpen {
		sa := &unix.SockaddrInet4{Port: int(t.Port()), Addr: t.Addr().As4()}
		err = unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, sa)
	} else {
		err = rawConnect(fd, newSockaddr4(t))
	}
	if err != nil {
		return errnoWord(err)
	}
	return "ok peer " + peer(fd)
}

func peer(fd int) string {
	sa, err := unix.Getpeername(fd)
	if in, ok := sa.(*unix.SockaddrInet4); ok && err == nil {
		return netip.AddrFrom4(in.Addr).String()
	}
	return "unknown"
}

func probeRace(proxy, other netip.AddrPort) string {
	sa := newSockaddr4(proxy)
	a, b := addrWord(proxy), addrWord(other)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			atomic.StoreUint32(&sa.addr, b)
			atomic.StoreUint32(&sa.addr, a)
		}
	}()
	counts := map[string]int{}
	for range raceRounds {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			counts[errnoWord(err)]++
			continue
		}
		if err := rawConnect(fd, sa); err != nil {
			counts[errnoWord(err)]++
		} else {
			counts[peer(fd)]++
		}
		unix.Close(fd)
	}
	stop.Store(true)
	<-done
	return fmt.Sprintf("race %s=%d %s=%d refused=%d", proxy.Addr(), counts[proxy.Addr().String()],
		other.Addr(), counts[other.Addr().String()], counts["EACCES"])
}

// swapFd is the descriptor number the swap probe connects through.
const swapFd = 100

func probeSwap(other netip.AddrPort) string {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return errnoWord(err)
	}
	sa := newSockaddr4(other)
	var inet atomic.Int64
	inet.Store(int64(pair[0]))
	if err := unix.Dup3(pair[0], swapFd, 0); err != nil {
		return errnoWord(err)
	}
	var stop atomic.Bool
	var cycles atomic.Int64
	started, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		close(started)
		// Each state is held a while: without a listener in between, a
		// connect reads the descriptor at once.
		for !stop.Load() {
			unix.Dup3(int(inet.Load()), swapFd, 0)
			unix.Getpid()
			unix.Dup3(pair[0], swapFd, 0)
			unix.Getpid()
			cycles.Add(1)
		}
	}()
	<-started
	connected := 0
	for range raceRounds {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			continue
		}
		inet.Store(int64(fd))
		// The flipper has taken the new socket.
		for c := cycles.Load(); cycles.Load() < c+2; {
		}
		rawConnect(swapFd, sa)
		inet.Store(int64(pair[0]))
		if _, err := unix.Getpeername(fd); err == nil {
			connected++
		}
		unix.Close(fd)
	}
	stop.Store(true)
	<-done
	return fmt.Sprintf("swap connected=%d", connected)
}

func errnoWord(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := err.(unix.Errno); ok {
		return unix.ErrnoName(e)
	}
	return err.Error()
}
