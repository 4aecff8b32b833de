package integration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// waitExited blocks until every process in pids has exited, woken by their
// pidfds, which the kernel makes readable when a process exits. One that
// is gone already counts as exited. The limit only turns a process that
// never exits into a failure instead of a hang.
func waitExited(t *testing.T, pids ...int) {
	t.Helper()
	var fds []unix.PollFd
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err == unix.ESRCH {
			continue
		}
		require.NoError(t, err, "pidfd_open %d", pid)
		defer unix.Close(fd)
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	deadline := time.Now().Add(time.Minute)
	for len(fds) > 0 {
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		require.NoError(t, err)
		require.NotZero(t, n, "processes %v still run after a minute", pids)
		left := fds[:0]
		for _, f := range fds {
			if f.Revents == 0 {
				left = append(left, f)
			}
		}
		fds = left
	}
}
