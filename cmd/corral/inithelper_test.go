package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// installCLI copies this test binary (the CLI with cliEnv set; an init
// helper too, as it calls corral.Init first) into dir as corral, and
// initFile, when not nil, as corral-init beside it.
func installCLI(t *testing.T, dir string, initFile func(path string)) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	corral := filepath.Join(dir, "corral")
	copyFile(t, self, corral)
	if initFile != nil {
		initFile(filepath.Join(dir, initHelperName))
	}
	return corral
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// runInstalled runs the installed CLI, without CORRAL_HELPER.
func runInstalled(t *testing.T, corral string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	c := exec.Command(corral, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CORRAL_HELPER=") {
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(c.Env, cliEnv+"=1")
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		require.NoError(t, err)
	}
	return out.String(), errb.String(), c.ProcessState.ExitCode()
}

// The sandbox's PID 1 shows which binary it runs in its argv[0].
const showInit = "tr '\\0' ' ' </proc/1/cmdline"

func TestRunUsesCorralInitBeside(t *testing.T) {
	needsSandbox(t)
	self, err := os.Executable()
	require.NoError(t, err)
	bin := workspace(t)
	require.NoError(t, os.Chmod(bin, 0o755))
	corral := installCLI(t, bin, func(path string) { copyFile(t, self, path) })
	out, stderr, code := runInstalled(t, corral, "run", "--workspace", workspace(t), "--", "sh", "-c", showInit)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, filepath.Join(bin, initHelperName)+" __sandbox-init ", out)

	// Not executable, or not there: corral runs its inits itself.
	require.NoError(t, os.Chmod(filepath.Join(bin, initHelperName), 0o644))
	out, stderr, code = runInstalled(t, corral, "run", "--workspace", workspace(t), "--", "sh", "-c", showInit)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "/proc/self/exe __sandbox-init ", out)
	require.NoError(t, os.Remove(filepath.Join(bin, initHelperName)))
	out, stderr, code = runInstalled(t, corral, "run", "--workspace", workspace(t), "--", "sh", "-c", showInit)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "/proc/self/exe __sandbox-init ", out)
}

// A corral-init a command could have written (it lies in the workspace)
// builds no sandbox: corral runs its inits itself.
func TestRunIgnoresCorralInitInTheWorkspace(t *testing.T) {
	needsSandbox(t)
	self, err := os.Executable()
	require.NoError(t, err)
	ws := workspace(t)
	require.NoError(t, os.Chmod(ws, 0o755))
	corral := installCLI(t, ws, func(path string) { copyFile(t, self, path) })
	out, stderr, code := runInstalled(t, corral, "run", "--workspace", ws, "--", "sh", "-c", showInit)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "/proc/self/exe __sandbox-init ", out)
}

// A corral-init that is not corral's (or of another version) is a setup
// error naming it, never a hang or a command run in a sandbox it built.
func TestRunRefusesAForeignCorralInit(t *testing.T) {
	needsSandbox(t)
	bin := workspace(t)
	require.NoError(t, os.Chmod(bin, 0o755))
	corral := installCLI(t, bin, func(path string) { copyFile(t, "/bin/true", path) })
	out, stderr, code := runInstalled(t, corral, "run", "--workspace", workspace(t), "--", "echo", "ran")
	assert.Equal(t, exitSetup, code)
	assert.Empty(t, out)
	assertOneLine(t, stderr, filepath.Join(bin, initHelperName))
	assert.Contains(t, stderr, "not a corral binary")
}
