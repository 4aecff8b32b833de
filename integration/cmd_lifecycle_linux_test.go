package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
)

// lifecycleRungs are the rungs whose process handling differs: a PID
// namespace ended by killing its init, and a bare init asked to kill.
var lifecycleRungs = []corral.Rung{corral.RungFull, corral.RungLandlock}

func forRungs(t *testing.T, cfg corral.Config, fn func(t *testing.T, sb *corral.Sandbox)) {
	for _, rung := range lifecycleRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := rungSandbox(t, rung, cfg)
			fn(t, sb)
		})
	}
}

func TestCmdWaitAfterFailedStart(t *testing.T) {
	w := newWorld(t)
	sb := newSandbox(t, w.config())
	c := sb.Command(context.Background(), "no-such-command-xyz")
	require.ErrorIs(t, c.Start(), corral.ErrNotFound)
	assert.NotPanics(t, func() { assert.Error(t, c.Wait(), "os/exec: Wait after a failed Start is an error") })
	assert.Error(t, c.Start(), "a second Start is refused")
}

// blockingWriter signals its first Write and holds it until released: the
// command has written and exited, its output is still being copied.
type blockingWriter struct {
	entered chan struct{}
	release chan struct{}
	first   bool
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	if !b.first {
		b.first = true
		close(b.entered)
		<-b.release
	}
	return len(p), nil
}

// A context that fires after the command exited, while its output is still
// copied, must neither act on the released sandbox nor turn the command's
// success into a context error.
func TestCmdContextFiringAfterExitKeepsSuccess(t *testing.T) {
	w := newWorld(t)
	forRungs(t, w.config(), func(t *testing.T, sb *corral.Sandbox) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := sb.Command(ctx, "echo", "out")
		bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
		c.Stdout = bw
		kill := c.Cancel
		cancelled := make(chan error, 1)
		c.Cancel = func() error { err := kill(); cancelled <- err; return err }
		require.NoError(t, c.Start())
		// ESRCH: the init has exited and been reaped already.
		initFd, err := unix.PidfdOpen(c.Process.Pid, 0)
		if err != unix.ESRCH {
			require.NoError(t, err)
			defer unix.Close(initFd)
		}
		waited := make(chan error, 1)
		go func() { waited <- c.Wait() }()
		<-bw.entered
		// The init exits after it reported the command's status: from
		// then on, killing cannot change how the command ended.
		if err == nil {
			pollReadable(t, initFd)
		}
		require.Eventually(t, func() bool { return errors.Is(kill(), os.ErrProcessDone) }, 10*time.Second, 5*time.Millisecond,
			"Wait released the sandbox")
		cancel()
		close(bw.release)
		require.NoError(t, <-waited, "os/exec reports no context error for a command that ended on its own")
		select {
		case err := <-cancelled:
			assert.ErrorIs(t, err, os.ErrProcessDone, "a Cancel after release acts on nothing")
		default: // Wait had stopped watching the context: Cancel was not called
		}
		require.NotNil(t, c.ProcessState)
		assert.True(t, c.ProcessState.Success())
		assert.Equal(t, 0, c.ProcessState.ExitCode())
	})
}

func pollReadable(t *testing.T, fd int) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err != unix.EINTR {
			require.NoError(t, err)
			return
		}
	}
}

func TestCmdKilledByContextHasProcessState(t *testing.T) {
	w := newWorld(t)
	forRungs(t, w.config(), func(t *testing.T, sb *corral.Sandbox) {
		ctx, cancel := context.WithCancel(context.Background())
		c := sb.Command(ctx, "sleep", "60")
		require.NoError(t, c.Start())
		cancel()
		assert.ErrorIs(t, c.Wait(), context.Canceled)
		require.NotNil(t, c.ProcessState, "the status of a killed command is known")
		assert.Equal(t, -1, c.ProcessState.ExitCode())
		assert.Equal(t, syscall.SIGKILL, c.ProcessState.Sys().(syscall.WaitStatus).Signal())
	})
}

// A Stdin that blocks in Read does not hold Wait once the command exited,
// with or without WaitDelay.
func TestCmdBlockingStdinDoesNotHoldWait(t *testing.T) {
	w := newWorld(t)
	forRungs(t, w.config(), func(t *testing.T, sb *corral.Sandbox) {
		for _, delay := range []time.Duration{0, time.Hour} {
			pr, pw := io.Pipe() // never written: Read blocks
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			c := sb.Command(ctx, "true")
			c.Stdin = pr
			c.WaitDelay = delay
			require.NoError(t, c.Run(), "WaitDelay %s", delay)
			require.NotNil(t, c.ProcessState)
			assert.True(t, c.ProcessState.Success())
			cancel()
			pw.Close()
		}
	})
}

// WaitDelay kills a command that a Cancel did not end.
func TestCmdWaitDelayKillsWhatCancelLeftRunning(t *testing.T) {
	w := newWorld(t)
	forRungs(t, w.config(), func(t *testing.T, sb *corral.Sandbox) {
		ctx, cancel := context.WithCancel(context.Background())
		c := sb.Command(ctx, "sleep", "60")
		c.Cancel = func() error { return nil } // asks nothing of the command
		c.WaitDelay = 20 * time.Millisecond
		require.NoError(t, c.Start())
		cancel()
		assert.ErrorIs(t, c.Wait(), context.Canceled)
		require.NotNil(t, c.ProcessState)
		assert.Equal(t, syscall.SIGKILL, c.ProcessState.Sys().(syscall.WaitStatus).Signal())
	})
}

func TestCmdPipes(t *testing.T) {
	w := newWorld(t)
	forRungs(t, w.config(), func(t *testing.T, sb *corral.Sandbox) {
		c := sb.Command(context.Background(), "sh", "-c", "cat; echo err >&2")
		in, err := c.StdinPipe()
		require.NoError(t, err)
		out, err := c.StdoutPipe()
		require.NoError(t, err)
		errp, err := c.StderrPipe()
		require.NoError(t, err)
		_, err = c.StdoutPipe()
		assert.Error(t, err, "Stdout already set")
		require.NoError(t, c.Start())
		_, err = io.WriteString(in, "hello\n")
		require.NoError(t, err)
		require.NoError(t, in.Close())
		got, err := io.ReadAll(out)
		require.NoError(t, err)
		gotErr, err := io.ReadAll(errp)
		require.NoError(t, err)
		require.NoError(t, c.Wait())
		assert.Equal(t, "hello\n", string(got))
		assert.Equal(t, "err\n", string(gotErr))
	})
}

func TestCmdExtraFilesReachDescriptorsFromThree(t *testing.T) {
	w := newWorld(t)
	in := filepath.Join(w.outside, "in.txt")
	require.NoError(t, os.WriteFile(in, []byte("from fd 4\n"), 0o644))
	forRungs(t, w.config(), func(t *testing.T, sb *corral.Sandbox) {
		pr, pw, err := os.Pipe()
		require.NoError(t, err)
		defer pr.Close()
		f, err := os.Open(in)
		require.NoError(t, err)
		defer f.Close()
		c := sb.Command(context.Background(), "sh", "-c", "echo to-fd-3 >&3; cat <&4")
		c.ExtraFiles = []*os.File{pw, f}
		var out strings.Builder
		c.Stdout = &out
		require.NoError(t, c.Start())
		pw.Close()
		got, err := io.ReadAll(pr)
		require.NoError(t, err)
		require.NoError(t, c.Wait())
		assert.Equal(t, "to-fd-3\n", string(got))
		assert.Equal(t, "from fd 4\n", out.String())
	})
}

func TestCmdExtraFilesRefusesNil(t *testing.T) {
	w := newWorld(t)
	sb := newSandbox(t, w.config())
	c := sb.Command(context.Background(), "true")
	c.ExtraFiles = []*os.File{nil}
	err := c.Run()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ExtraFiles[0] is nil")
}

func TestCmdProcessStateHasTheCommandsCPUTime(t *testing.T) {
	w := newWorld(t)
	forRungs(t, w.config(), func(t *testing.T, sb *corral.Sandbox) {
		c := sb.Command(context.Background(), "sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
		require.NoError(t, c.Run())
		ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage)
		require.True(t, ok, "SysUsage is a *syscall.Rusage")
		require.NotNil(t, ru)
		assert.Positive(t, c.ProcessState.UserTime()+c.ProcessState.SystemTime(), "the loop used CPU")
	})
}

func TestCmdEnvIsFilteredLikeTheDefault(t *testing.T) {
	t.Setenv("CORRAL_TEST_API_KEY", "sk-should-not-pass")
	t.Setenv("CORRAL_TEST_ALLOWED_TOKEN", "allowed-value")
	w := newWorld(t)
	cfg := w.config()
	cfg.Env = []string{"CORRAL_TEST_ALLOWED_TOKEN"}
	sb := newSandbox(t, cfg)
	c := sb.Command(context.Background(), "env")
	c.Env = append(os.Environ(), "X=1") // the os/exec idiom
	assert.NotContains(t, strings.Join(c.Environ(), "\n"), "should-not-pass")
	out, err := c.Output()
	require.NoError(t, err)
	assert.NotContains(t, string(out), "should-not-pass")
	assert.Contains(t, string(out), "X=1\n")
	assert.Contains(t, string(out), "CORRAL_TEST_ALLOWED_TOKEN=allowed-value", "Config.Env names it")
}

// pidfds counts this process's open pidfds.
func pidfds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "anon_inode:[pidfd]" {
			n++
		}
	}
	return n
}

// A finished command leaves no pidfd behind, without waiting for the
// garbage collector.
func TestCmdReleasesItsPidfdsAtWait(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	w := newWorld(t)
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%t", direct), func(t *testing.T) {
			cfg := w.config()
			cfg.DirectSpawn = direct
			sb := newSandbox(t, cfg)
			ctx := context.Background()
			require.NoError(t, sb.Command(ctx, "true").Run()) // the spawner, if any, is up
			require.NoError(t, sb.Warm(ctx))
			before := pidfds(t)
			for range 3 {
				require.NoError(t, sb.Command(ctx, "true").Run())
			}
			require.NoError(t, sb.Warm(ctx))
			assert.Equal(t, before, pidfds(t), "every pidfd of a finished command is closed")
		})
	}
}

// openInheritable opens path without O_CLOEXEC, as a shell's `exec 7<file`
// or a careless library does; it is closed when the test ends.
func openInheritable(t *testing.T, path string, flags int) int {
	t.Helper()
	fd, err := syscall.Open(path, flags, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Close(fd) })
	return fd
}

// Descriptors the caller holds without close-on-exec do not reach the
// command: not a hidden file, not a directory through which a hidden one is
// read by relative path, not an append descriptor to a file outside.
func TestInheritedDescriptorsDoNotReachTheCommand(t *testing.T) {
	w := newWorld(t)
	victim := filepath.Join(w.outside, "profile")
	require.NoError(t, os.WriteFile(victim, []byte("# profile\n"), 0o644))
	file := openInheritable(t, filepath.Join(w.secret, "token"), syscall.O_RDONLY)
	dir := openInheritable(t, w.secret, syscall.O_RDONLY|syscall.O_DIRECTORY)
	app := openInheritable(t, victim, syscall.O_WRONLY|syscall.O_APPEND)
	script := fmt.Sprintf(`ls -l /proc/self/fd
cat /proc/self/fd/%[1]d && echo LEAK-FILE
cat /proc/self/fd/%[2]d/token && echo LEAK-DIR
echo planted >>/proc/self/fd/%[3]d && echo LEAK-APPEND
true`, file, dir, app)

	// The control: a plain child of the caller gets all three.
	out, err := exec.Command("sh", "-c", script).CombinedOutput()
	require.NoError(t, err, string(out))
	for _, leak := range []string{"LEAK-FILE", "LEAK-DIR", "LEAK-APPEND", "s3cr3t-payload"} {
		require.Contains(t, string(out), leak, "without the sandbox the descriptor reaches the child")
	}
	require.NoError(t, os.WriteFile(victim, []byte("# profile\n"), 0o644))

	for _, direct := range []bool{false, true} {
		cfg := w.config()
		cfg.DirectSpawn = direct
		t.Run(fmt.Sprintf("direct=%t", direct), func(t *testing.T) {
			forRungs(t, cfg, func(t *testing.T, sb *corral.Sandbox) {
				c := sb.Command(context.Background(), "sh", "-c", script)
				out, err := c.CombinedOutput()
				require.NoError(t, err, string(out))
				s := string(out)
				for _, leak := range []string{"LEAK-FILE", "LEAK-DIR", "LEAK-APPEND", "s3cr3t-payload", w.secret, victim} {
					assert.NotContains(t, s, leak)
				}
				assert.True(t, fileHas(victim, "# profile\n") && !fileHas(victim, "planted"), "nothing was appended")
				lines := 0
				for _, l := range strings.Split(s, "\n") {
					if strings.Contains(l, " -> ") {
						lines++
					}
				}
				assert.LessOrEqual(t, lines, 4, "only 0, 1, 2 and ls's own directory: %s", s)
			})
		})
	}
}

// corral's own descriptors (init socket, pidfds, spawner socket) do not
// reach the command either: it sees exactly 0, 1 and 2, plus ExtraFiles.
func TestCommandSeesOnlyItsOwnDescriptors(t *testing.T) {
	w := newWorld(t)
	forRungs(t, w.config(), func(t *testing.T, sb *corral.Sandbox) {
		f, err := os.Open(os.DevNull)
		require.NoError(t, err)
		defer f.Close()
		c := sb.Command(context.Background(), "sh", "-c", "ls /proc/$$/fd")
		c.ExtraFiles = []*os.File{f}
		out, err := c.Output()
		require.NoError(t, err)
		var fds []int
		for _, s := range strings.Fields(string(out)) {
			n, err := strconv.Atoi(s)
			require.NoError(t, err)
			fds = append(fds, n)
		}
		assert.Equal(t, []int{0, 1, 2, 3}, fds)
	})
}
