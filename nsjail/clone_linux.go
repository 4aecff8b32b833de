package nsjail

import (
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// initCaps are the capabilities the init keeps across its exec, in its own
// user namespace only: mounting and pivoting, bringing lo up, lowering the
// namespace limits, and emptying the bounding set before it starts the
// command. overlayfs records its mounter's credentials and acts with them
// for good, so a changeset's overlay also needs what overlayfs does in the
// upper directory: create entries in its mode-0 work directory, copy files
// up keeping owner, mode and times (DAC_OVERRIDE, FOWNER, CHOWN, FSETID). In
// a user namespace that maps only the caller's ids these reach only the
// caller's own files. SYS_PTRACE lets the init's listener read the memory
// and /proc links of a command's process that made itself non-dumpable
// (see ptraced), which it raises for that alone.
var initCaps = []uintptr{
	unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SYS_RESOURCE, unix.CAP_SETPCAP,
	unix.CAP_DAC_OVERRIDE, unix.CAP_FOWNER, unix.CAP_CHOWN, unix.CAP_FSETID,
	unix.CAP_SYS_PTRACE,
}

// kernelObjectNS are the namespaces of kernel objects the command would
// otherwise share with the host: System V shared memory, semaphores and
// message queues and POSIX message queues (IPC), the host name (UTS), and
// the view of the cgroup tree (cgroup, so /proc/self/cgroup shows "/").
const kernelObjectNS = unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// sandboxNS are the namespaces every sandbox of the full rung gets.
const sandboxNS = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | kernelObjectNS

// cloneInit starts a fresh init in new user, mount, PID, IPC, UTS and
// cgroup namespaces (and a network namespace when netNone) and returns the
// caller's end of its socket. The init runs as the caller's own uid and
// gid, mapped 1:1 (see idMappings for root). It runs the helper's binary,
// or with a nil helper the caller's own.
func cloneInit(helper *Helper, netNone bool) (*os.File, int, error) {
	flags := uintptr(sandboxNS)
	if netNone {
		flags |= unix.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	return startInit(helper, &syscall.SysProcAttr{
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
func startBareInit(helper *Helper) (*os.File, int, error) {
	return startInit(helper, &syscall.SysProcAttr{Setsid: true})
}

func startInit(helper *Helper, attr *syscall.SysProcAttr) (*os.File, int, error) {
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
	exe := helper.initExe()
	pid, err := syscall.ForkExec(exe, []string{helper.name(), initName}, &syscall.ProcAttr{
		Env:   []string{},
		Files: []uintptr{devNull.Fd(), devNull.Fd(), os.Stderr.Fd(), theirs.Fd()},
		Sys:   attr,
	})
	if err != nil {
		ours.Close()
		return nil, 0, &os.PathError{Op: "fork/exec", Path: exe, Err: err}
	}
	if registerInits {
		initExitChan(pid) // before its status can arrive
	}
	go reapInit(pid) // the command's status travels on the socket
	return ours, pid, nil
}

// reapInit collects an init's exit status so it does not linger as a
// zombie, and hands it to initExited. An init is never left stopped: on the
// landlock rung its command may stop it (it is no namespace's PID 1 there),
// which would leave the caller waiting for a status that never comes.
func reapInit(pid int) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil:
			return
		case ws.Stopped():
			syscall.Kill(pid, syscall.SIGCONT)
		default:
			initExited(pid, ws)
			return
		}
	}
}

// initExited receives the status of every init this process reaps. The
// spawner sends it on to its caller; a caller records it for the sandbox's
// Wait.
var initExited = recordInitExit

// initExits holds the exit statuses of inits, by pid, until their sandbox
// takes them.
var initExits sync.Map // int -> chan syscall.WaitStatus

func initExitChan(pid int) chan syscall.WaitStatus {
	ch, _ := initExits.LoadOrStore(pid, make(chan syscall.WaitStatus, 1))
	return ch.(chan syscall.WaitStatus)
}

// registerInits says this process keeps the statuses of the inits it
// reaps; the spawner sends them on instead.
var registerInits = true

// recordInitExit passes on an init's status to its sandbox, if one still
// waits for it.
func recordInitExit(pid int, ws syscall.WaitStatus) {
	ch, ok := initExits.Load(pid)
	if !ok {
		return // its sandbox is released: nobody asks
	}
	select {
	case ch.(chan syscall.WaitStatus) <- ws:
	default: // already told
	}
}

// takeInitExit returns the channel that receives the init's status, for
// its sandbox to keep until it is released (forgetInitExit).
func takeInitExit(pid int) chan syscall.WaitStatus { return initExitChan(pid) }

func forgetInitExit(pid int, ch chan syscall.WaitStatus) { initExits.CompareAndDelete(pid, ch) }

// lostInitExits answers every sandbox still waiting with SIGKILL, the status
// of an init killed from outside, when the process that reaps them (the
// spawner) is gone and no status will come.
func lostInitExits() {
	initExits.Range(func(pid, ch any) bool {
		recordInitExit(pid.(int), syscall.WaitStatus(syscall.SIGKILL))
		return true
	})
}

// directCloner clones inits from the calling process, running the
// helper's binary when one is set, else the caller's own.
type directCloner struct{ helper *Helper }

func (d directCloner) clone(netNone bool) (*conn, int, error) {
	return connect(cloneInit(d.helper, netNone))
}

// bareCloner starts inits without namespaces from the calling process,
// running the helper's binary when one is set.
type bareCloner struct{ helper *Helper }

func (b bareCloner) clone(bool) (*conn, int, error) {
	return connect(startBareInit(b.helper))
}

func connect(f *os.File, pid int, err error) (*conn, int, error) {
	if err != nil {
		return nil, 0, err
	}
	c, err := fileConn(f)
	return c, pid, err
}
