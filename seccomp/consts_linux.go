package seccomp

import "golang.org/x/sys/unix"

// The values the policy matches on, as this architecture defines them.
const (
	tiocsti        = unix.TIOCSTI
	tioclinux      = unix.TIOCLINUX
	sigIll         = uint64(unix.SIGILL)
	sigTrap        = uint64(unix.SIGTRAP)
	sigBus         = uint64(unix.SIGBUS)
	sigFpe         = uint64(unix.SIGFPE)
	sigSegv        = uint64(unix.SIGSEGV)
	sigStkflt      = uint64(unix.SIGSTKFLT)
	sigSys         = uint64(unix.SIGSYS)
	fSetsig        = unix.F_SETSIG
	afUnix         = unix.AF_UNIX
	afInet         = unix.AF_INET
	afNetlink      = unix.AF_NETLINK
	afInet6        = unix.AF_INET6
	sockDgram      = unix.SOCK_DGRAM
	sockStream     = unix.SOCK_STREAM
	ipprotoTCP     = unix.IPPROTO_TCP
	cloneNewNS     = unix.CLONE_NEWNS
	cloneNewCgroup = unix.CLONE_NEWCGROUP
	cloneNewUTS    = unix.CLONE_NEWUTS
	cloneNewIPC    = unix.CLONE_NEWIPC
	cloneNewUser   = unix.CLONE_NEWUSER
	cloneNewPID    = unix.CLONE_NEWPID
	cloneNewNet    = unix.CLONE_NEWNET
)
