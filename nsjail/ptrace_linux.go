package nsjail

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/seccomp"
)

// Reaching into a process of the command (reading its memory, following
// its /proc/PID/cwd and fd links, taking a descriptor with pidfd_getfd)
// takes ptrace access. The init is the command's parent with the same uid,
// which is enough while the process is dumpable; one that made itself
// non-dumpable (prctl(PR_SET_DUMPABLE, 0), as ssh-agent and gpg-agent do)
// or runs a binary it may not read is reachable only with CAP_SYS_PTRACE
// in its user namespace, which the init holds (permitted) on the full
// rung. The listener's thread runs without effective capabilities, so that
// what it creates for the command is created with the command's
// permissions: it raises CAP_SYS_PTRACE only to retry one of these steps
// that failed without it, never around an open or a creation of a file of
// the command's.

// noPtrace is set in an init whose caller's tests asked for its listener
// to go without CAP_SYS_PTRACE (setup.NoPtrace), to show what it is for.
var noPtrace bool

// ptraced runs f, and when it fails, once more with CAP_SYS_PTRACE
// effective on the calling thread, if the thread holds it permitted and
// has it not effective already. A dumpable process costs nothing more.
//
// Preconditions: must be called with the OS thread locked.
func ptraced(f func() error) error {
	err := f()
	if err == nil || noPtrace {
		return err
	}
	restore, ok := raisePtrace()
	if !ok {
		return err
	}
	defer restore()
	return f()
}

// raisePtrace adds CAP_SYS_PTRACE to the calling thread's effective set,
// and returns what puts the set back.
func raisePtrace() (func(), bool) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return nil, false
	}
	const bit = 1 << unix.CAP_SYS_PTRACE // below 32: in the first word
	if data[0].Effective&bit != 0 || data[0].Permitted&bit == 0 {
		return nil, false
	}
	old := data[0].Effective
	data[0].Effective |= bit
	if unix.Capset(&hdr, &data[0]) != nil {
		return nil, false
	}
	return func() {
		data[0].Effective = old
		unix.Capset(&hdr, &data[0])
	}, true
}

// readString is seccomp.ReadString with ptrace access to a non-dumpable
// process.
func readString(tid int, addr uint64, max int) (string, bool) {
	var s string
	err := ptraced(func() error {
		var ok bool
		if s, ok = seccomp.ReadString(tid, addr, max); !ok {
			return unix.EFAULT
		}
		return nil
	})
	return s, err == nil
}

// readMemory is seccomp.ReadMemory with ptrace access to a non-dumpable
// process.
func readMemory(tid int, addr uint64, buf []byte) bool {
	return ptraced(func() error {
		if !seccomp.ReadMemory(tid, addr, buf) {
			return unix.EFAULT
		}
		return nil
	}) == nil
}

// getFd is seccomp.GetFd with ptrace access to a non-dumpable process.
func getFd(listener int, n seccomp.Notification, fd int) (int, error) {
	var dup int
	err := ptraced(func() (err error) {
		dup, err = seccomp.GetFd(listener, n, fd)
		return err
	})
	return dup, err
}

// openLink opens, O_PATH, the /proc magic link name (cwd, fd/N) below
// the process directory dir: its target, not the link.
func openLink(dir int, name string) (int, error) {
	var fd int
	err := ptraced(func() (err error) {
		fd, err = unix.Openat(dir, name, unix.O_PATH|unix.O_CLOEXEC, 0)
		return err
	})
	return fd, err
}

// readLink is os.Readlink of a /proc magic link of the command's.
func readLink(p string) (string, error) {
	var s string
	err := ptraced(func() (err error) {
		s, err = os.Readlink(p)
		return err
	})
	return s, err
}

// selfFd is the path that reopens descriptor fd of this process, as the
// kernel checks any open: a file reached through a link of the command's
// (O_PATH, see openLink) is opened so without CAP_SYS_PTRACE.
func selfFd(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }
