package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// cli runs the corral CLI (this test binary in CLI mode) in dir.
func cli(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return cliAt(t, os.Args[0], dir, args...)
}

// cliAt runs the corral CLI at path (a copy of this test binary) in dir.
func cliAt(t *testing.T, path, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	c := exec.Command(path, args...)
	c.Env = append(os.Environ(), cliEnv+"=1")
	c.Dir = dir
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		require.NoError(t, err)
	}
	return out.String(), errb.String(), c.ProcessState.ExitCode()
}

func workspace(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// needsSandbox skips t on a host that cannot build the sandbox `corral run`
// asks for by default.
func needsSandbox(t *testing.T) {
	t.Helper()
	sandboxtest.Require(t, corral.Config{})
}

// assertOneLine checks that stderr is a single "corral: ..." line (plus the
// usage hint for usage errors) and never a Go panic.
func assertOneLine(t *testing.T, stderr, want string) {
	t.Helper()
	assert.NotContains(t, stderr, "goroutine")
	assert.NotContains(t, stderr, "panic")
	first, _, _ := strings.Cut(stderr, "\n")
	assert.True(t, strings.HasPrefix(first, "corral: "), "stderr: %q", stderr)
	assert.Contains(t, first, want)
}

func TestRunExitStatuses(t *testing.T) {
	ws := workspace(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "plain.txt"), []byte("x"), 0o644))
	file := filepath.Join(ws, "plain.txt")
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		stderr  string // a substring of the first stderr line, when the CLI speaks
		noSpeak bool   // the CLI itself prints nothing
		spawns  bool   // a sandbox is built
	}{
		{"success", []string{"run", "--", "true"}, 0, "", true, true},
		{"command's own status", []string{"run", "--", "sh", "-c", "exit 7"}, 7, "", true, true},
		{"killed by a signal", []string{"run", "--", "sh", "-c", "kill -TERM $$"}, 128 + 15, "", true, true},
		{"not found", []string{"run", "--", "no-such-command-xyz"}, 127, "no-such-command-xyz", false, true},
		{"not executable", []string{"run", "--", file}, 126, "permission denied", false, true},
		{"timeout", []string{"run", "--timeout", "200ms", "--", "sleep", "30"}, 128 + 9, "timed out after 200ms", false, true},
		{"missing workspace", []string{"run", "--workspace", "/no/such/ws", "--", "true"}, 2, "--workspace /no/such/ws: does not exist", false, false},
		{"file as workspace", []string{"run", "--workspace", file, "--", "true"}, 2, "--workspace " + file + ": not a directory", false, false},
		{"missing read-only path", []string{"run", "--read-only", "/no/such/ro", "--", "true"}, 2, "--read-only /no/such/ro: does not exist", false, false},
		{"missing hidden path", []string{"run", "--hide", "/no/such/hidden", "--", "true"}, 2, "--hide /no/such/hidden: does not exist", false, false},
		{"missing cwd", []string{"run", "--cwd", "/no/such/cwd", "--", "true"}, 2, "--cwd /no/such/cwd:", false, true},
		{"unknown flag", []string{"run", "--bogus", "--", "true"}, 2, "unknown flag: --bogus", false, false},
		{"bad network", []string{"run", "--net", "wifi", "--", "true"}, 2, `--net "wifi"`, false, false},
		{"bad duration", []string{"run", "--timeout", "soon", "--", "true"}, 2, "soon", false, false},
		{"env without a name", []string{"run", "--env", "=x", "--", "true"}, 2, `--env "=x"`, false, false},
		{"empty env", []string{"run", "--env", "", "--", "true"}, 2, `--env ""`, false, false},
		{"empty workspace", []string{"run", "--workspace", "", "--", "true"}, 2, "--workspace: empty path", false, false},
		{"empty writable path", []string{"run", "--writable", "", "--", "true"}, 2, "--writable: empty path", false, false},
		{"empty hidden path", []string{"run", "--hide", "", "--", "true"}, 2, "--hide: empty path", false, false},
		{"missing writable path", []string{"run", "--writable", "/no/such/rw", "--", "true"}, 2, "--writable /no/such/rw: does not exist", false, false},
		{"cwd is a file", []string{"run", "--cwd", file, "--", "true"}, 2, "--cwd " + file + ": not a directory", false, true},
		{"no command", []string{"run"}, 2, "requires at least 1 arg", false, false},
		{"unknown subcommand", []string{"frobnicate"}, 2, "unknown command", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.spawns {
				needsSandbox(t)
			}
			_, stderr, code := cli(t, ws, tc.args...)
			assert.Equal(t, tc.code, code, "stderr: %s", stderr)
			if tc.noSpeak {
				assert.NotContains(t, stderr, "corral:")
				return
			}
			assertOneLine(t, stderr, tc.stderr)
		})
	}
}

func TestRunDefaultsToTheCurrentDirectory(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	stdout, stderr, code := cli(t, ws, "run", "--", "sh", "-c", "pwd; echo hi > made; echo no > /etc/corral-cli-probe 2>/dev/null || echo denied")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, ws+"\ndenied\n", stdout)
	assert.FileExists(t, filepath.Join(ws, "made"))
}

func TestRunFlagsAfterCommandBelongToIt(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	stdout, _, code := cli(t, ws, "run", "--", "echo", "--net", "none")
	require.Equal(t, 0, code)
	assert.Equal(t, "--net none\n", stdout)
}

func TestRunEnvFlag(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	stdout, _, code := cli(t, ws, "run", "--env", "FOO=bar", "--", "sh", "-c", "echo $FOO")
	require.Equal(t, 0, code)
	assert.Equal(t, "bar\n", stdout)
}

func TestVersionAndHelp(t *testing.T) {
	stdout, _, code := cli(t, t.TempDir(), "version")
	require.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(stdout, "corral "), stdout)

	stdout, _, code = cli(t, t.TempDir(), "help")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "run")
	assert.NotContains(t, stdout, "__sandbox")

	stdout, _, code = cli(t, t.TempDir(), "run", "--help")
	require.Equal(t, 0, code)
	for _, flag := range []string{"--workspace", "--writable", "--read-only", "--hide", "--net", "--cwd", "--env", "--timeout"} {
		assert.Contains(t, stdout, flag)
	}
}
