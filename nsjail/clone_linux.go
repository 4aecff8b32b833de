package nsjail

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/reexec"
)

// initCaps are the capabilities the init keeps across its exec, in its own
// user namespace only: mounting and pivoting, bringing lo up, lowering the
// namespace limits, and emptying the bounding set before it starts the
// command. overlayfs records its mounter's credentials and acts with them
// for good, so a changeset's overlay also needs what overlayfs does in the
// upper directory: create entries in its mode-0 work directory, copy files
// up keeping owner, mode and times (DAC_OVERRIDE, FOWNER, CHOWN, FSETID). In
// a user namespace that maps only the caller's ids these reach only the
// caller's own files.
var initCaps = []uintptr{
	unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SYS_RESOURCE, unix.CAP_SETPCAP,
	unix.CAP_DAC_OVERRIDE, unix.CAP_FOWNER, unix.CAP_CHOWN, unix.CAP_FSETID,
}

// cloneInit starts a fresh init in new user, mount and PID namespaces (and a
// network namespace when netNone) and returns the caller's end of its socket.
// The init runs as the caller's own uid and gid, mapped 1:1 (see
// idMappings for root).
func cloneInit(netNone bool) (*os.File, int, error) {
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID)
	if netNone {
		flags |= unix.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	return startInit(&syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: uidMappings(os.Geteuid(), uid),
		GidMappings: gidMappings(os.Geteuid(), gid),
		AmbientCaps: initCaps,
		Pdeathsig:   unix.SIGKILL,
		Setsid:      true,
	})
}

// startBareInit starts an init without namespaces. It has no pdeathsig: when
// the caller dies, its socket closes and the init kills what it started
// before exiting, which a signal would not let it do.
func startBareInit() (*os.File, int, error) {
	return startInit(&syscall.SysProcAttr{Setsid: true})
}

func startInit(attr *syscall.SysProcAttr) (*os.File, int, error) {
	ours, theirs, err := socketPair()
	if err != nil {
		return nil, 0, err
	}
	defer theirs.Close()
	// syscall rather than os/exec: os.StartProcess first checks, once per
	// process, that CLONE_PIDFD works by forking a child that exits at once,
	// a second fork on a short-lived caller's path. The init's standard
	// input and output are /dev/null, its stderr the caller's, its socket
	// fd 3.
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		ours.Close()
		return nil, 0, err
	}
	defer devNull.Close()
	pid, err := syscall.ForkExec(reexec.Self, []string{reexec.Self, InitName}, &syscall.ProcAttr{
		Env:   []string{},
		Files: []uintptr{devNull.Fd(), devNull.Fd(), os.Stderr.Fd(), theirs.Fd()},
		Sys:   attr,
	})
	if err != nil {
		ours.Close()
		return nil, 0, &os.PathError{Op: "fork/exec", Path: reexec.Self, Err: err}
	}
	go reapInit(pid) // the status travels on the socket
	return ours, pid, nil
}

// reapInit collects an init's exit status so it does not linger as a zombie.
func reapInit(pid int) {
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			return
		}
	}
}

// directCloner clones inits from the calling process.
type directCloner struct{}

func (directCloner) clone(netNone bool) (*conn, int, error) {
	return connect(cloneInit(netNone))
}

// bareCloner starts inits without namespaces from the calling process.
type bareCloner struct{}

func (bareCloner) clone(bool) (*conn, int, error) { return connect(startBareInit()) }

func connect(f *os.File, pid int, err error) (*conn, int, error) {
	if err != nil {
		return nil, 0, err
	}
	c, err := fileConn(f)
	return c, pid, err
}
