package seccomp

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// createNames are the calls that can give a new name to something: the
// calls a listener must perform itself, rather than let go on, to decide
// soundly on the name (see CreateProgram).
var createNames = map[string]bool{
	"open": true, "openat": true, "creat": true, "openat2": true,
	"mkdir": true, "mkdirat": true, "mknod": true, "mknodat": true,
	"symlink": true, "symlinkat": true, "link": true, "linkat": true,
	"rename": true, "renameat": true, "renameat2": true,
}

// CreateCalls are the calls of WriteCalls that can create a name: open
// with O_CREAT, mkdir, mknod, symlink, link and rename in all their forms.
// nil where there is no table.
func CreateCalls() map[uint32]WriteCall {
	all := WriteCalls()
	if all == nil {
		return nil
	}
	out := make(map[uint32]WriteCall, len(createNames))
	for nr, c := range all {
		if createNames[c.Name] {
			out[nr] = c
		}
	}
	return out
}

// CreateProgram is a notify program that stops only the calls of
// CreateCalls, opens only when their flags carry O_CREAT (openat2, whose
// flags are in memory, always). It is for a listener that performs those
// calls itself: a listener that read a name in the caller's memory and let
// the call go on would decide on a string another thread can change before
// the kernel reads it again.
//
// also names what it stops besides (see Also).
func CreateProgram(also Also) ([]unix.SockFilter, error) {
	return notifyCalls(CreateCalls(), unix.O_CREAT, also)
}

// ReturnValue answers the stopped call with val as its result, as if it
// had run: the listener has performed it.
func ReturnValue(fd int, id uint64, val int64) error {
	r := notifResp{id: id, val: val}
	err := sendResp(fd, &r)
	if err != nil && err != unix.ENOENT {
		return os.NewSyscallError("ioctl(SECCOMP_IOCTL_NOTIF_SEND)", err)
	}
	return nil
}

// ReturnFile answers the stopped call with a copy of file, installed in its
// process at the lowest free number, which is the call's result; close-on-
// exec when cloexec. Install and answer are one step (Linux 5.14), so the
// process never holds a descriptor its call did not return.
func ReturnFile(fd int, id uint64, file int, cloexec bool) error {
	a := notifAddfd{id: id, flags: unix.SECCOMP_ADDFD_FLAG_SEND, srcfd: uint32(file)}
	if cloexec {
		a.newfdFlags = unix.O_CLOEXEC
	}
	var err error
	noSignals(func() { _, err = addFD(fd, &a) })
	switch err {
	case nil, unix.ENOENT:
		return nil
	case unix.EINVAL:
		// Before Linux 5.14: install, then answer with the number.
		a.flags = 0
		n, err := addFD(fd, &a)
		if err != nil {
			return Fail(fd, id, unix.EMFILE)
		}
		return ReturnValue(fd, id, int64(n))
	case unix.EMFILE, unix.ENFILE:
		return Fail(fd, id, err.(unix.Errno))
	}
	return os.NewSyscallError("ioctl(SECCOMP_IOCTL_NOTIF_ADDFD)", err)
}

// noSignals runs f with every signal blocked on the calling thread. The
// kernel marks a call answered by SECCOMP_ADDFD_FLAG_SEND before it waits
// for the stopped thread to take the descriptor; a signal that interrupts
// that wait (the Go runtime's own, a child's SIGCHLD) leaves the call
// answered with 0, its process's standard input, and the restarted ioctl
// fails with EINPROGRESS. Blocked, only a fatal signal ends the wait.
func noSignals(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	all := unix.Sigset_t{}
	for i := range all.Val {
		all.Val[i] = ^all.Val[i] // every bit, whatever the word size
	}
	var old unix.Sigset_t
	if unix.PthreadSigmask(unix.SIG_SETMASK, &all, &old) != nil {
		f()
		return
	}
	f()
	unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
}

// CreatesNames reports whether the call named name is one of CreateCalls.
func CreatesNames(name string) bool { return createNames[name] }

// guardNames are the calls besides CreateCalls that a listener guarding
// existing files performs or looks at: truncate and the chmods change a
// file in place (an open that writes is among CreateCalls' opens), and
// removing a directory may remove one the listener mounted.
var guardNames = map[string]bool{"truncate": true, "chmod": true, "fchmodat": true, "fchmodat2": true, "fchmod": true,
	"rmdir": true, "unlinkat": true}

// GuardCalls are CreateCalls with truncate, the chmods, rmdir and
// unlinkat, the last stopped only with AT_REMOVEDIR (its flags, argument
// 2): removing a file costs no stop.
func GuardCalls() map[uint32]WriteCall {
	all := WriteCalls()
	if all == nil {
		return nil
	}
	out := make(map[uint32]WriteCall, len(createNames)+len(guardNames))
	for nr, c := range all {
		if createNames[c.Name] || guardNames[c.Name] {
			if c.Name == "unlinkat" {
				c.FlagsArg = 2
			}
			out[nr] = c
		}
	}
	return out
}

// GuardProgram is CreateProgram for a listener that also guards existing
// files: it stops the calls of GuardCalls, opens when their flags ask to
// write (WriteFlags), not only to create, and unlinkat with AT_REMOVEDIR,
// which is among those bits (O_TRUNC's; unlinkat takes no other flag but
// fails with EINVAL).
func GuardProgram(also Also) ([]unix.SockFilter, error) {
	return notifyCalls(GuardCalls(), WriteFlags, also)
}

// Guards reports whether a stopped call n is one of GuardCalls that a
// listener guarding existing files performs or looks at: an open whose
// flags ask to write, unlinkat with AT_REMOVEDIR.
func Guards(call WriteCall, n Notification) bool {
	switch {
	case !createNames[call.Name] && !guardNames[call.Name]:
		return false
	case call.Name == "unlinkat":
		return n.Args[2]&unix.AT_REMOVEDIR != 0
	case call.FlagsArg >= 0:
		return n.Args[call.FlagsArg]&WriteFlags != 0
	}
	return true
}
