package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/hosttest"
)

// mcpInstall is a directory holding corral and corral-mcp, both copies of
// this test binary, which TestMain runs as the one or the other by name.
var mcpInstall struct {
	once sync.Once
	dir  string
}

// mcpCLI returns the path of corral with corral-mcp beside it, made once
// per test binary, as `make build` installs them.
func mcpCLI(t *testing.T) string {
	t.Helper()
	mcpInstall.once.Do(func() {
		dir, err := os.MkdirTemp("", "corral-mcp-cli-")
		require.NoError(t, err)
		mcpInstall.dir = dir
		require.NoError(t, os.Chmod(dir, 0o755))
		installPair(t, dir)
	})
	require.NotEmpty(t, mcpInstall.dir, "installing corral and corral-mcp failed in an earlier test")
	return filepath.Join(mcpInstall.dir, "corral")
}

// installPair copies this test binary into dir as corral and corral-mcp.
func installPair(t *testing.T, dir string) {
	self, err := os.Executable()
	require.NoError(t, err)
	hosttest.CopyFile(t, self, filepath.Join(dir, "corral"))
	hosttest.CopyFile(t, self, filepath.Join(dir, mcpServerName))
}

func removeMCPInstall() {
	if mcpInstall.dir != "" {
		os.RemoveAll(mcpInstall.dir)
	}
}

// TestMCPWithoutServer: corral mcp without corral-mcp beside it is a setup
// error naming the missing file, before anything is served.
func TestMCPWithoutServer(t *testing.T) {
	corral := hosttest.CopySelf(t, "corral")
	ws := workspace(t)
	_, stderr, code := cliAt(t, corral, ws, "mcp", "--workspace", ws)
	assert.Equal(t, exitSetup, code, stderr)
	assertOneLine(t, stderr, filepath.Join(filepath.Dir(corral), mcpServerName)+" not found")
	assert.Contains(t, stderr, "make build builds both")
}

// TestMCPServerWhereCommandsWrite: corral mcp refuses to run a corral-mcp
// that the sandbox's commands could replace (in the workspace, or under a
// --writable path); the same pair installed elsewhere serves, the control.
func TestMCPServerWhereCommandsWrite(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	inWS := filepath.Join(ws, "bin")
	require.NoError(t, os.Mkdir(inWS, 0o755))
	installPair(t, inWS)
	other := workspace(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"workspace", []string{"--workspace", ws}},
		{"writable", []string{"--workspace", other, "--writable", inWS}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := cliAt(t, filepath.Join(inWS, "corral"), other, append([]string{"mcp"}, tc.args...)...)
			assert.Equal(t, exitSetup, code, stderr)
			assertOneLine(t, stderr, filepath.Join(inWS, mcpServerName)+" lies where this sandbox's commands may write")
		})
	}
	t.Run("control", func(t *testing.T) {
		// Served, it exits 0 at the end of its (empty) input.
		c := exec.Command(filepath.Join(inWS, "corral"), "mcp", "--workspace", other)
		c.Env = append(os.Environ(), cliEnv+"=1")
		c.Dir = other
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s", out)
	})
}

// TestMCPHelp: corral help mcp and corral mcp --help describe the same
// command, the latter printed by corral-mcp.
func TestMCPHelp(t *testing.T) {
	ws := workspace(t)
	for _, args := range [][]string{{"help", "mcp"}, {"mcp", "--help"}} {
		stdout, stderr, code := cliAt(t, mcpCLI(t), ws, args...)
		assert.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "Serve corral's tools over the Model Context Protocol")
		assert.Contains(t, stdout, "--read-only-tools")
	}
}
