package integration

import (
	"bytes"
	"os"
	"strconv"
	"strings"
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

// doomed reports whether process pid has exited, is exiting, or has a
// fatal signal pending, which the kernel records as SIGKILL pending the
// moment a fatal signal is sent: what a kill that succeeded leaves, seen
// without waiting for the process to die.
func doomed(t *testing.T, pid int) bool {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // reaped
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	flags, err := strconv.ParseUint(f[6], 10, 64)
	require.NoError(t, err)
	const pfExiting = 0x4
	if f[0] == "Z" || f[0] == "X" || flags&pfExiting != 0 {
		return true
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, v, _ := strings.Cut(line, ":")
		if name != "SigPnd" && name != "ShdPnd" {
			continue
		}
		set, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		require.NoError(t, err)
		if set&(1<<(unix.SIGKILL-1)) != 0 {
			return true
		}
	}
	return false
}
