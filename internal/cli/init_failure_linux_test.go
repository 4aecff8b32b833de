package cli

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/testhook"
)

// queueFault queues SIGILL to pid with sigqueue's code, which a Go program
// takes for a fault of its own, whichever of its threads receives it.
func queueFault(pid int) error {
	var info [128]byte
	binary.LittleEndian.PutUint32(info[0:], uint32(syscall.SIGILL))
	binary.LittleEndian.PutUint32(info[8:], 0xffffffff) // SI_QUEUE
	binary.LittleEndian.PutUint32(info[16:], uint32(os.Getpid()))
	binary.LittleEndian.PutUint32(info[20:], uint32(os.Getuid()))
	_, _, errno := syscall.Syscall(syscall.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(syscall.SIGILL), uintptr(unsafe.Pointer(&info[0])))
	if errno != 0 {
		return errno
	}
	return nil
}

// queueFaultFd is queueFault through a pidfd (pidfd_send_signal).
func queueFaultFd(pidfd int) error {
	var info [128]byte
	binary.LittleEndian.PutUint32(info[0:], uint32(syscall.SIGILL))
	binary.LittleEndian.PutUint32(info[8:], 0xffffffff) // SI_QUEUE
	binary.LittleEndian.PutUint32(info[16:], uint32(os.Getpid()))
	binary.LittleEndian.PutUint32(info[20:], uint32(os.Getuid()))
	_, _, errno := syscall.Syscall6(unix.SYS_PIDFD_SEND_SIGNAL, uintptr(pidfd), uintptr(syscall.SIGILL), uintptr(unsafe.Pointer(&info[0])), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// sandboxInitOf finds the init of the command that runs `sleep` below the
// CLI process cli: the sleep's parent (a sandbox built ahead may wait
// beside it).
func sandboxInitOf(t *testing.T, cli int) int {
	var pid int
	// The shell that printed "started" execs sleep right after.
	require.Eventually(t, func() bool { pid = findInit(cli); return pid != 0 }, 10*time.Second, 5*time.Millisecond,
		"no sandboxed command below %d", cli)
	return pid
}

func findInit(cli int) int {
	parents := map[int]int{}
	var sleeps []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		parents[pid], _ = strconv.Atoi(f[1])
		if cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); bytes.HasPrefix(cmdline, []byte("sleep\x00")) {
			sleeps = append(sleeps, pid)
		}
	}
	for _, pid := range sleeps {
		for p := parents[pid]; p > 1; p = parents[p] {
			if p == cli {
				return parents[pid]
			}
		}
	}
	return 0
}

// cliRungs are the rungs the init tests run the CLI on, with the layers
// that are taken as missing to force each.
var cliRungs = []struct {
	rung    corral.Rung
	disable string
}{
	{corral.RungFull, ""},
	{corral.RungLandlock, string(corral.LayerUserNS)},
}

// startCLI starts `corral run` on rung r with the given command and waits
// for the command's first line of output.
func startCLI(t *testing.T, disable string, args ...string) (*exec.Cmd, *bytes.Buffer, *bufio.Reader) {
	t.Helper()
	c := exec.Command(os.Args[0], append([]string{"run", "--fallback", "warn", "--"}, args...)...)
	c.Env = append(os.Environ(), cliEnv+"=1", cliDisableEnv+"="+disable)
	c.Dir = workspace(t)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	require.Equal(t, "started\n", line)
	return c, &stderr, r
}

// needsRung skips t when the host cannot give rung with every layer.
func needsRung(t *testing.T, rung corral.Rung, disable string) {
	t.Helper()
	if disable != "" {
		defer testhook.Disable(disable)()
	}
	r, err := corral.Doctor(corral.Config{Fallback: corral.FallbackWarn})
	require.NoError(t, err)
	if r.Rung != rung {
		t.Skipf("this host cannot give rung %s", rung)
	}
}

// noDump checks that the caller's stderr holds no runtime dump and no line
// but corral's own.
func noDump(t *testing.T, stderr string) {
	t.Helper()
	assert.NotContains(t, stderr, "goroutine")
	assert.NotContains(t, stderr, "SIGSEGV")
	assert.NotContains(t, stderr, "SIGILL")
	assert.NotContains(t, stderr, "SIGABRT")
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if line != "" {
			assert.True(t, strings.HasPrefix(line, "corral: "), "a line not corral's on the caller's stderr: %q", line)
		}
	}
}

// TestRunInitSurvivesSignals has the command signal its init with every
// signal that would crash or end a Go program, SIGKILL included: the command's status is its
// own and the caller's stderr stays clean.
func TestRunInitSurvivesSignals(t *testing.T) {
	handled := "ABRT SEGV BUS FPE ILL TRAP SYS QUIT TERM INT HUP USR1 PIPE ALRM"
	sigs := handled + " STOP KILL"
	for _, r := range cliRungs {
		t.Run(string(r.rung), func(t *testing.T) {
			needsRung(t, r.rung, r.disable)
			target := "1"
			if r.rung == corral.RungLandlock {
				target = "$PPID"
			}
			// On the landlock rung the kills are refused; on the full one
			// the kernel ignores most of them for PID 1.
			script := "trap '' " + handled + "; echo started; for s in " + sigs + "; do kill -$s " + target + " 2>/dev/null; done; echo alive; exit 7"
			c, stderr, out := startCLI(t, r.disable, "sh", "-c", script)
			rest, _ := out.ReadString('\n')
			err := c.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
			assert.Equal(t, 7, c.ProcessState.ExitCode(), "stderr: %s", stderr.String())
			assert.Equal(t, "alive\n", rest)
			noDump(t, stderr.String())
		})
	}
}

// TestRunInitFailureExits125 crashes the sandbox's init while its command
// runs, from outside (the command cannot): the CLI exits 125 with a line
// naming the init, never with a status the command did not have, and no
// runtime dump reaches its stderr.
func TestRunInitFailureExits125(t *testing.T) {
	control := exec.Command("sleep", "100")
	require.NoError(t, control.Start())
	require.NoError(t, queueFault(control.Process.Pid))
	var ee *exec.ExitError
	require.ErrorAs(t, control.Wait(), &ee)
	require.Equal(t, syscall.SIGILL, ee.Sys().(syscall.WaitStatus).Signal(), "a queued SIGILL is delivered")
	for _, r := range cliRungs {
		t.Run(string(r.rung), func(t *testing.T) {
			needsRung(t, r.rung, r.disable)
			c, stderr, _ := startCLI(t, r.disable, "sh", "-c", "echo started; exec sleep 20")
			init, perr := unix.PidfdOpen(sandboxInitOf(t, c.Process.Pid), 0)
			require.NoError(t, perr)
			defer unix.Close(init)
			waited := make(chan error, 1)
			go func() { waited <- c.Wait() }()
			// A fault that lands in a goroutine that recovers panics (fmt
			// does) can leave a Go program running: queue until it dies,
			// through a pidfd, which never reaches a process that took
			// the init's pid after it.
			var err error
		queue:
			for i := 0; ; i++ {
				if qerr := queueFaultFd(init); qerr != nil || i == 100 {
					err = <-waited
					break
				}
				select {
				case err = <-waited:
					break queue
				case <-time.After(20 * time.Millisecond):
				}
			}
			require.True(t, err == nil || errors.As(err, &ee))
			assert.Equal(t, 125, c.ProcessState.ExitCode())
			noDump(t, stderr.String())
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			assert.Contains(t, lines[len(lines)-1], "init", "stderr: %q", stderr.String())
		})
	}
}
