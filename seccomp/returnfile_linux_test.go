package seccomp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/hosttest"
)

// TestReturnFileUnderSignalsChild opens files through a listener whose
// thread keeps being signalled, and prints what went wrong.
func TestReturnFileUnderSignalsChild(t *testing.T) {
	if os.Getenv(childEnv) != "returnfile" {
		t.Skip("runs only as the child of TestReturnFileUnderSignals")
	}
	dir := os.Getenv(childEnv + "_DIR")
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, nil, 0o644))
	var want unix.Stat_t
	require.NoError(t, unix.Stat(target, &want))

	runtime.LockOSThread()
	prog, err := CreateProgram(Also{})
	require.NoError(t, err)
	require.NoError(t, unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	fd, err := LoadListener(prog)
	require.NoError(t, err)

	// The listener answers every open with a descriptor of target; a
	// second goroutine signals its thread all along.
	tid := make(chan int)
	var stop atomic.Bool
	go func() {
		runtime.LockOSThread()
		tid <- unix.Gettid()
		for {
			n, err := Receive(fd)
			if errors.Is(err, unix.ENOENT) {
				continue // the call was withdrawn before it was taken
			}
			if err != nil {
				fmt.Println("Receive:", err)
				return
			}
			f, err := unix.Open(target, unix.O_WRONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				Fail(fd, n.ID, unix.EIO)
				continue
			}
			if err := ReturnFile(fd, n.ID, f, true); err != nil {
				fmt.Println("ReturnFile:", err)
			}
			unix.Close(f)
		}
	}()
	listener := <-tid
	go func() {
		for !stop.Load() {
			unix.Tgkill(os.Getpid(), listener, unix.SIGURG)
		}
	}()
	var bad []string
	for i := range 3000 {
		got, err := unix.Open(filepath.Join(dir, fmt.Sprintf("f%d", i)), unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
		if err != nil {
			bad = append(bad, fmt.Sprintf("open %d: %v", i, err))
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(got, &st); err != nil || st.Ino != want.Ino || st.Dev != want.Dev {
			bad = append(bad, fmt.Sprintf("open %d returned %d, not the listener's file", i, got))
		} else {
			unix.Close(got)
		}
	}
	stop.Store(true)
	fmt.Println("bad:", len(bad), strings.Join(bad[:min(len(bad), 3)], "; "))
}

// A listener's thread that a signal interrupts while it hands the stopped
// thread a descriptor and answers with it (SECCOMP_ADDFD_FLAG_SEND) must
// not leave the call answered without the descriptor: the kernel marks the
// call answered before it waits for the stopped thread to take the
// descriptor, and an interrupted wait gave the call 0 for its result (its
// process's standard input) and the listener EINPROGRESS on the restart.
// ReturnFile keeps signals off its thread meanwhile.
func TestReturnFileUnderSignals(t *testing.T) {
	if ok, why := Available(); !ok {
		hosttest.Skip(t, "no seccomp filters here: "+why)
	}
	if err := ListenerSupport(); err != nil {
		hosttest.Skip(t, err.Error())
	}
	// A child whose listener stopped would wait for ever in its next open.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestReturnFileUnderSignalsChild$")
	cmd.Env = append(os.Environ(), childEnv+"=returnfile", childEnv+"_DIR="+t.TempDir())
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "bad: 0 \n", "%s", out)
}
