//go:build linux

package integration

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// sleepMark is a unique duration for `sleep`, so the test can find exactly
// its own sleeping processes in the host's /proc.
func sleepMark() string { return strconv.Itoa(500000 + rand.IntN(400000)) }

// findSleeps returns the host pids running `sleep mark`.
func findSleeps(mark string) []int {
	want := "sleep\x00" + mark + "\x00"
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(b) == want {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killAll(pids []int) {
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// gone reports whether every `sleep mark` running now exits within d.
func gone(mark string, d time.Duration) bool {
	return exitWithin(d, findSleeps(mark)...)
}

const orphanScript = `setsid sleep %[1]s >/dev/null 2>&1 & (sleep %[1]s >/dev/null 2>&1 &); nohup sleep %[1]s >/dev/null 2>&1 & echo spawned`

func TestOrphansDieWithTheCommand(t *testing.T) {
	w := newWorld(t)

	mark := sleepMark()
	r := w.bare(fmt.Sprintf(orphanScript, mark))
	require.Equal(t, 0, r.code, r.String())
	require.Eventually(t, func() bool { return len(findSleeps(mark)) == 3 }, 5*time.Second, 10*time.Millisecond,
		"without the sandbox, background processes outlive the command")
	killAll(findSleeps(mark))

	mark = sleepMark()
	r = w.sandboxed(w.config(), fmt.Sprintf(orphanScript, mark))
	require.Equal(t, 0, r.code, r.String())
	leftover := findSleeps(mark)
	killAll(leftover)
	assert.Empty(t, leftover, "processes outlived the sandboxed command")
}

// startCaller starts a copy of the test binary that spawns `sleep mark` and
// waits; it returns once the sleep runs.
func startCaller(t *testing.T, mark string, env ...string) *exec.Cmd {
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), append(env, roleEnv+"=caller", "CORRAL_TEST_MARK="+mark, "CORRAL_TEST_WS="+realDir(t))...)
	c.Stderr = os.Stderr
	out, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "started\n", line)
	require.Eventually(t, func() bool { return len(findSleeps(mark)) == 1 }, 5*time.Second, 10*time.Millisecond)
	return c
}

func TestSandboxDiesWithItsCaller(t *testing.T) {
	t.Run("control: a bare child outlives a killed caller", func(t *testing.T) {
		mark := sleepMark()
		caller := startCaller(t, mark, "CORRAL_TEST_BARE=1")
		require.NoError(t, caller.Process.Kill())
		caller.Wait()
		leftover := findSleeps(mark)
		killAll(leftover)
		assert.Len(t, leftover, 1)
	})
	for _, path := range []struct{ name, env string }{
		{"through the spawner", "CORRAL_TEST_DIRECT="},
		{"cloned directly", "CORRAL_TEST_DIRECT=1"},
	} {
		t.Run(path.name, func(t *testing.T) {
			sandboxtest.Require(t, corral.Config{})
			mark := sleepMark()
			caller := startCaller(t, mark, path.env)
			require.NoError(t, caller.Process.Kill())
			caller.Wait()
			ok := gone(mark, 10*time.Second)
			killAll(findSleeps(mark))
			assert.True(t, ok, "the sandbox outlived its SIGKILLed caller")
		})
	}
}

// Cancelling the context of a command kills everything it started, not
// only the command itself as os/exec does.
func TestCancelKillsTheWholeSandbox(t *testing.T) {
	const script = `(sleep %[1]s >/dev/null 2>&1 &); sleep %[1]s`
	w := newWorld(t)

	mark := sleepMark()
	ctx, cancel := context.WithCancel(t.Context())
	bare := exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf(script, mark))
	require.NoError(t, bare.Start())
	require.Eventually(t, func() bool { return len(findSleeps(mark)) == 2 }, 5*time.Second, 10*time.Millisecond)
	cancel()
	bare.Wait()
	// Both sleeps ran before the cancel, which kills sh alone.
	leftover := findSleeps(mark)
	killAll(leftover)
	require.NotEmpty(t, leftover, "without the sandbox, cancelling leaves what the command started running")

	sb := newSandbox(t, w.config())
	mark = sleepMark()
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	c := sb.Command(ctx, "sh", "-c", fmt.Sprintf(script, mark))
	require.NoError(t, c.Start())
	require.Eventually(t, func() bool { return len(findSleeps(mark)) == 2 }, 5*time.Second, 10*time.Millisecond)
	cancel()
	assert.ErrorIs(t, c.Wait(), context.Canceled)
	ok := gone(mark, 5*time.Second)
	killAll(findSleeps(mark))
	assert.True(t, ok, "a process outlived the cancelled sandbox")
}
