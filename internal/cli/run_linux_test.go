package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shell that opened descriptors without close-on-exec and then ran the
// CLI hands none of them to the command: a secret file (fd 7), a directory
// (fd 8) and an append descriptor (fd 9).
func TestRunPassesNoInheritedDescriptors(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	secret := "/etc/shadow"
	if os.Geteuid() != 0 {
		// An unprivileged user cannot open /etc/shadow: a file of its own
		// stands in for it.
		secret = filepath.Join(workspace(t), "shadow")
		require.NoError(t, os.WriteFile(secret, []byte("root:s3cr3t:\n"), 0o600))
	}
	home := workspace(t)
	require.NoError(t, os.WriteFile(filepath.Join(home, "key"), []byte("k3y-payload"), 0o600))
	profile := filepath.Join(workspace(t), "profile")
	require.NoError(t, os.WriteFile(profile, []byte("# profile\n"), 0o644))
	probe := `ls -l /proc/self/fd
cat <&7 >/dev/null && echo LEAK7
cat /proc/self/fd/8/key && echo LEAK8
echo planted >&9 && echo LEAK9
true`
	shell := func(inner string) string {
		return `exec 7<"$SECRET" 8<"$HOMEDIR" 9>>"$PROFILE"; ` + inner
	}
	env := append(os.Environ(), cliEnv+"=1", "SECRET="+secret, "HOMEDIR="+home, "PROFILE="+profile,
		"CLI="+os.Args[0], "PROBE="+probe)

	// The control: the shell's own child gets all three.
	c := exec.Command("sh", "-c", shell(`sh -c "$PROBE"`))
	c.Env = env
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, leak := range []string{"LEAK7", "LEAK8", "LEAK9", "k3y-payload"} {
		require.Contains(t, string(out), leak)
	}
	require.NoError(t, os.WriteFile(profile, []byte("# profile\n"), 0o644))

	c = exec.Command("sh", "-c", shell(`"$CLI" run --workspace "$WS" -- sh -c "$PROBE"`))
	c.Env = append(env, "WS="+ws)
	out, err = c.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, leak := range []string{"LEAK7", "LEAK8", "LEAK9", "k3y-payload", secret, home, profile} {
		assert.NotContains(t, string(out), leak)
	}
	b, err := os.ReadFile(profile)
	require.NoError(t, err)
	assert.Equal(t, "# profile\n", string(b))
}

// processes lists the pids whose command line contains mark.
func processes(mark string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), mark) {
			if pid, err := strconv.Atoi(e.Name()); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// startUnderShell runs the CLI from a shell that stays its parent, and
// returns the shell, the CLI's pid and the mark of the command's sleep.
func startUnderShell(t *testing.T, flags string) (*exec.Cmd, int, string) {
	t.Helper()
	mark := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1000000)
	sh := exec.Command("sh", "-c", `"$CLI" run `+flags+` --workspace "$WS" -- sh -c "echo started; exec sleep $MARK" & echo cli=$!; wait`)
	sh.Env = append(os.Environ(), cliEnv+"=1", "CLI="+os.Args[0], "WS="+workspace(t), "MARK="+mark)
	stdout, err := sh.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, sh.Start())
	t.Cleanup(func() {
		for _, pid := range processes("sleep " + mark) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		sh.Process.Kill()
		sh.Wait()
	})
	r := bufio.NewScanner(stdout)
	cli := 0
	for r.Scan() {
		line := r.Text()
		if v, ok := strings.CutPrefix(line, "cli="); ok {
			cli, _ = strconv.Atoi(v)
		}
		if line == "started" {
			break
		}
	}
	require.NotZero(t, cli)
	require.NotEmpty(t, processes("sleep "+mark), "the command runs")
	return sh, cli, mark
}

// An agent killed while its command runs takes the command with it: the
// CLI follows the process that started it.
func TestRunDiesWithItsParent(t *testing.T) {
	needsSandbox(t)
	sh, cli, mark := startUnderShell(t, "")
	require.NoError(t, sh.Process.Kill())
	sh.Wait()
	assert.Eventually(t, func() bool { return len(processes("sleep "+mark)) == 0 }, 20*time.Second, 10*time.Millisecond,
		"the command outlived the process that started corral")
	assert.Eventually(t, func() bool { return parentOf(cli) == -1 }, 20*time.Second, 10*time.Millisecond,
		"the CLI outlived the process that started it")
}

// The control, and the opt-out: with --no-die-with-parent the CLI and its
// command are re-parented and keep running.
func TestRunNoDieWithParentOutlivesIt(t *testing.T) {
	needsSandbox(t)
	sh, cli, mark := startUnderShell(t, "--no-die-with-parent")
	shPid := sh.Process.Pid
	require.NoError(t, sh.Process.Kill())
	sh.Wait()
	require.Eventually(t, func() bool { p := parentOf(cli); return p != shPid }, 20*time.Second, 10*time.Millisecond)
	assert.NotEqual(t, -1, parentOf(cli), "the CLI keeps running")
	assert.NotEmpty(t, processes("sleep "+mark), "its command keeps running")
	syscall.Kill(cli, syscall.SIGTERM)
}
