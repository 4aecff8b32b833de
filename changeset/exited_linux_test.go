package changeset_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// waitExited blocks until process pid has exited, woken by its pidfd. The
// limit only turns a process that never exits into a failure instead of a
// hang.
func waitExited(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return
	}
	require.NoError(t, err)
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(time.Minute.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		require.NoError(t, err)
		require.NotZero(t, n, "process %d still runs after a minute", pid)
		return
	}
}
