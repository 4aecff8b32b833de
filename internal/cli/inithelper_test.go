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

	"github.com/corralhq/corral/internal/hosttest"
)

// installCLI copies this test binary (the CLI with cliEnv set; an init
// helper too, as it calls corral.Init first) into a fresh directory as
// corral, and returns its path; initFile, when not nil, puts corral-init
// beside it.
func installCLI(t *testing.T, initFile func(path string)) string {
	t.Helper()
	corral := hosttest.CopySelf(t, "corral")
	if initFile != nil {
		initFile(filepath.Join(filepath.Dir(corral), initHelperName))
	}
	return corral
}

// copySelf is an initFile: this test binary as corral-init.
func copySelf(t *testing.T) func(string) {
	self, err := os.Executable()
	require.NoError(t, err)
	return func(path string) { hosttest.CopyFile(t, self, path) }
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
	corral := installCLI(t, copySelf(t))
	bin, err := filepath.EvalSymlinks(filepath.Dir(corral))
	require.NoError(t, err)
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
	corral := installCLI(t, copySelf(t))
	ws := filepath.Dir(corral)
	out, stderr, code := runInstalled(t, corral, "run", "--workspace", ws, "--", "sh", "-c", showInit)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "/proc/self/exe __sandbox-init ", out)
}

// A corral-init that is not corral's (or of another version) is a setup
// error naming it, never a hang or a command run in a sandbox it built.
func TestRunRefusesAForeignCorralInit(t *testing.T) {
	needsSandbox(t)
	corral := installCLI(t, func(path string) { hosttest.CopyFile(t, "/bin/true", path) })
	bin := filepath.Dir(corral)
	out, stderr, code := runInstalled(t, corral, "run", "--workspace", workspace(t), "--", "echo", "ran")
	assert.Equal(t, exitSetup, code)
	assert.Empty(t, out)
	assertOneLine(t, stderr, filepath.Join(bin, initHelperName))
	assert.Contains(t, stderr, "not a corral binary")
}

// A corral-init another user could have put beside corral, or could
// replace, builds no sandbox: corral runs its inits itself.
func TestRunIgnoresCorralInitOthersMayReplace(t *testing.T) {
	needsSandbox(t)
	corral := installCLI(t, copySelf(t))
	bin := filepath.Dir(corral)
	helper := filepath.Join(bin, initHelperName)
	run := func() string {
		out, stderr, code := runInstalled(t, corral, "run", "--workspace", workspace(t), "--", "sh", "-c", showInit)
		require.Equal(t, 0, code, stderr)
		return out
	}
	require.Equal(t, helper+" __sandbox-init ", run(), "the control: corral-init is used")
	require.NoError(t, os.Chmod(helper, 0o777))
	assert.Equal(t, "/proc/self/exe __sandbox-init ", run(), "others may write corral-init")
	require.NoError(t, os.Chmod(helper, 0o755))
	require.NoError(t, os.Chmod(bin, 0o777))
	assert.Equal(t, "/proc/self/exe __sandbox-init ", run(), "others may replace it in its directory")
	require.NoError(t, os.Chmod(bin, os.ModeSticky|0o777))
	assert.Equal(t, helper+" __sandbox-init ", run(), "in a sticky directory only its owner may replace it")
	require.NoError(t, os.Chmod(bin, 0o755))
}

func TestReplaceableBy(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, nil, 0o755))
	me := uint32(os.Geteuid())
	assert.Empty(t, replaceableBy(f, me))
	if me != 0 {
		// To a third user, a file of this one is another user's.
		assert.Contains(t, replaceableBy(f, me+1), "belongs to another user")
	} else {
		require.NoError(t, os.Chown(f, 4242, 4242))
		assert.Contains(t, replaceableBy(f, me), "belongs to another user")
		require.NoError(t, os.Chown(f, 0, 0))
	}
	require.NoError(t, os.Chmod(f, 0o775))
	assert.Contains(t, replaceableBy(f, me), "others may write "+f)
	assert.Contains(t, replaceableBy(filepath.Join(dir, "missing"), me), "no such file")
}
