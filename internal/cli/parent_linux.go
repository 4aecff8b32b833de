package cli

import (
	"context"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// launcher is the process that started the CLI, read as early as Go allows:
// once that process dies, the CLI is re-parented and the number is lost.
var launcher = os.Getppid()

var errParentDied = errors.New("the process that started corral exited")

// withParent returns a context that is cancelled, with cause errParentDied,
// when the process that started the CLI exits: an agent killed mid-command
// takes its command with it, as bubblewrap's --die-with-parent does.
//
// It watches the parent through a pidfd, which turns readable when the whole
// process has exited. PR_SET_PDEATHSIG is not used while a pidfd is
// available: it fires when the parent *thread* that forked the CLI exits,
// which would kill commands started from a worker thread of a live agent.
// Where the kernel has no pidfd_open (before 5.3), the parent-death signal
// is the fallback. Either way, a parent that died before the CLI could look
// is caught: the CLI has then been re-parented and getppid no longer
// returns launcher.
func withParent(ctx context.Context) (context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := func() { cancel(nil) }
	if launcher <= 1 {
		// Started by PID 1 (a container's entrypoint), or orphaned before Go
		// started: there is no parent to follow.
		return ctx, stop, nil
	}
	fd, err := unix.PidfdOpen(launcher, 0)
	if err != nil {
		if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
			return nil, nil, os.NewSyscallError("prctl(PR_SET_PDEATHSIG)", err)
		}
		if os.Getppid() != launcher {
			os.Exit(128 + int(unix.SIGKILL))
		}
		return ctx, stop, nil
	}
	// The pidfd names launcher's process only if it is still our parent.
	if os.Getppid() != launcher {
		unix.Close(fd)
		return nil, nil, errors.New(errParentDied.Error() + " (pid " + strconv.Itoa(launcher) + ") before the command started")
	}
	go func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err == nil && n > 0 {
				cancel(errParentDied)
			}
			return
		}
	}()
	return ctx, stop, nil
}

// closeInherited closes the descriptors above stderr that the CLI inherited
// without close-on-exec (a shell's `exec 7</etc/shadow`): Go opens all of
// its own close-on-exec, so those are exactly the inherited ones.
func closeInherited() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}
