package integration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// waitExited blocks until every process in pids has exited. The limit only
// turns a process that never exits into a failure instead of a hang.
func waitExited(t *testing.T, pids ...int) {
	t.Helper()
	require.True(t, exitWithin(time.Minute, pids...), "processes %v still run after a minute", pids)
}

// exitWithin reports whether every process in pids exits within limit,
// woken by their pidfds, which the kernel makes readable when a process
// exits. One that is gone already counts as exited.
func exitWithin(limit time.Duration, pids ...int) bool {
	var fds []unix.PollFd
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // ESRCH: gone already
		}
		defer unix.Close(fd)
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	deadline := time.Now().Add(limit)
	for len(fds) > 0 {
		n, err := unix.Poll(fds, max(int(time.Until(deadline).Milliseconds()), 0))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return false
		}
		left := fds[:0]
		for _, f := range fds {
			if f.Revents == 0 {
				left = append(left, f)
			}
		}
		fds = left
	}
	return true
}
