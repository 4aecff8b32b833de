//go:build unix && !linux

package cli

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// launcher is the process that started the CLI, read as early as Go allows.
var launcher = os.Getppid()

var errParentDied = errors.New("the process that started corral exited")

// withParent returns a context cancelled, with cause errParentDied, once the
// process that started the CLI has exited. Without pidfds it notices the
// CLI being re-parented, checking every 100ms.
func withParent(ctx context.Context) (context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	if launcher <= 1 {
		return ctx, func() { cancel(nil) }, nil
	}
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if os.Getppid() != launcher {
				cancel(errParentDied)
				return
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ctx, func() { cancel(nil) }, nil
}

// closeInherited closes the descriptors above stderr that the CLI inherited
// without close-on-exec: Go opens all of its own close-on-exec, so those
// are exactly the inherited ones. Without /proc/self/fd it tries every
// number below the descriptor limit.
func closeInherited() {
	var lim unix.Rlimit
	top := uint64(1024)
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < 1<<16 {
		top = lim.Cur
	}
	for fd := 3; uint64(fd) < top; fd++ {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}
