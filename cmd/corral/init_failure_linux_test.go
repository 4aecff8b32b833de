package main

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
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queueFault queues SIGSEGV to pid with sigqueue's code, which a Go program
// takes for a fault of its own.
func queueFault(pid int) error {
	var info [128]byte
	binary.LittleEndian.PutUint32(info[0:], uint32(syscall.SIGSEGV))
	binary.LittleEndian.PutUint32(info[8:], 0xffffffff) // SI_QUEUE
	binary.LittleEndian.PutUint32(info[16:], uint32(os.Getpid()))
	binary.LittleEndian.PutUint32(info[20:], uint32(os.Getuid()))
	_, _, errno := syscall.Syscall(syscall.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(syscall.SIGSEGV), uintptr(unsafe.Pointer(&info[0])))
	if errno != 0 {
		return errno
	}
	return nil
}

// sandboxInitOf finds the init below the CLI process cli: its child, or its
// spawner's.
func sandboxInitOf(t *testing.T, cli int) int {
	parents := map[int]int{}
	inits := []int{}
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
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
		if cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); bytes.Contains(cmdline, []byte("__sandbox-init")) {
			inits = append(inits, pid)
		}
	}
	for _, pid := range inits {
		if parents[pid] == cli || parents[parents[pid]] == cli {
			return pid
		}
	}
	t.Fatalf("no sandbox init below %d", cli)
	return 0
}

// TestRunInitFailureExits125 crashes the sandbox's init while its command
// runs: the CLI exits 125 with one line, never with a status the command
// did not have, and no runtime dump reaches its stderr.
func TestRunInitFailureExits125(t *testing.T) {
	needsSandbox(t)
	control := exec.Command("sleep", "100")
	require.NoError(t, control.Start())
	require.NoError(t, queueFault(control.Process.Pid))
	var ee *exec.ExitError
	require.ErrorAs(t, control.Wait(), &ee)
	require.Equal(t, syscall.SIGSEGV, ee.Sys().(syscall.WaitStatus).Signal(), "a queued SIGSEGV is delivered")

	c := exec.Command(os.Args[0], "run", "--", "sh", "-c", "echo started; exec sleep 100")
	c.Env = append(os.Environ(), cliEnv+"=1")
	c.Dir = workspace(t)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	require.Equal(t, "started\n", line)
	require.NoError(t, queueFault(sandboxInitOf(t, c.Process.Pid)))
	err = c.Wait()
	require.True(t, err == nil || errors.As(err, &ee))
	assert.Equal(t, 125, c.ProcessState.ExitCode())
	assertOneLine(t, stderr.String(), "init")
	assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
}
