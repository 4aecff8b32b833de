package tools

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// heldFIFO makes a FIFO named "held" in dir for a command to hold open
// (exec 3>held) and returns a function that blocks until every process
// that inherited it has exited: the kernel reports a hangup on the reading
// end once the last writer is gone. The limit only turns a holder that
// never exits, or a command that never opened the FIFO, into a failure
// instead of a hang.
func heldFIFO(t *testing.T, dir string) (wait func()) {
	t.Helper()
	name := filepath.Join(dir, "held")
	require.NoError(t, unix.Mkfifo(name, 0o600))
	// Non-blocking, so that opening needs no writer yet. Linux reports no
	// hangup before a writer has come.
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd); os.Remove(name) })
	return func() {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		buf := make([]byte, 64)
		for {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, max(int(time.Until(deadline).Milliseconds()), 0))
			if err == unix.EINTR {
				continue
			}
			require.NoError(t, err)
			require.NotZero(t, n, "a process still holds %s after a minute, or none ever opened it", name)
			if fds[0].Revents&unix.POLLIN != 0 {
				if n, _ := unix.Read(fd, buf); n > 0 {
					continue
				}
			}
			if fds[0].Revents&unix.POLLHUP != 0 {
				return
			}
		}
	}
}
