package seccomp

import "golang.org/x/sys/unix"

// The values the policy matches on, as this architecture defines them.
const (
	tiocsti        = unix.TIOCSTI
	tioclinux      = unix.TIOCLINUX
	afUnix         = unix.AF_UNIX
	afInet         = unix.AF_INET
	afNetlink      = unix.AF_NETLINK
	afInet6        = unix.AF_INET6
	cloneNewNS     = unix.CLONE_NEWNS
	cloneNewCgroup = unix.CLONE_NEWCGROUP
	cloneNewUTS    = unix.CLONE_NEWUTS
	cloneNewIPC    = unix.CLONE_NEWIPC
	cloneNewUser   = unix.CLONE_NEWUSER
	cloneNewPID    = unix.CLONE_NEWPID
	cloneNewNet    = unix.CLONE_NEWNET
)
