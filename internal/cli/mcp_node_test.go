package cli

import (
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsClient is the node script of the TypeScript client test; embedded, as
// the test binary may run far from its sources.
//
//go:embed testdata/mcp_client.mjs
var tsClient []byte

// tsSDK is the package the TypeScript client test installs.
const tsSDK = "@modelcontextprotocol/sdk@^1"

// TestMCPTypeScriptClient drives `corral mcp` from a client no one here
// wrote: the official TypeScript SDK, under node, over stdio.
func TestMCPTypeScriptClient(t *testing.T) {
	needsSandbox(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (scripts/deps.sh installs nodejs): the TypeScript SDK client cannot run")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed (scripts/deps.sh installs it): the TypeScript SDK cannot be installed")
	}
	dir := tsSDKDir(t, npm)
	// The script resolves the SDK from its own directory.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mcp_client.mjs"), tsClient, 0o644))

	ws := workspace(t)
	c := exec.Command(node, filepath.Join(dir, "mcp_client.mjs"), mcpCLI(t), "mcp", "--workspace", ws)
	c.Env = append(os.Environ(), cliEnv+"=1")
	c.Dir = ws
	c.Stderr = os.Stderr
	out, err := c.Output()
	require.NoError(t, err, "node client: %s", out)

	var got struct {
		Tools []struct {
			Name      string
			HasSchema bool
		}
		Shell, Read struct {
			Text    string
			IsError bool
		}
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	var names []string
	for _, tl := range got.Tools {
		names = append(names, tl.Name)
		assert.True(t, tl.HasSchema, "%s has an object input schema", tl.Name)
	}
	assert.ElementsMatch(t, []string{"shell", "exec", "read_file", "write_file", "edit_file", "list_files"}, names)
	assert.Contains(t, got.Shell.Text, "from node")
	assert.Contains(t, got.Shell.Text, "Read-only file system", "the write outside the workspace failed")
	assert.True(t, got.Shell.IsError)
	assert.NoFileExists(t, "/etc/corral-ts-test")
	assert.False(t, got.Read.IsError, got.Read.Text)
	assert.Equal(t, "from node\n", got.Read.Text)
}

// tsSDKDir returns a directory holding the TypeScript SDK in node_modules,
// installing it with npm into the user's cache the first time.
func tsSDKDir(t *testing.T, npm string) string {
	t.Helper()
	dir := t.TempDir()
	if cache, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(cache, "corral-test", "mcp-ts-sdk")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return dir
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	c := exec.Command(npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir, tsSDK)
	c.Dir = dir
	out, err := c.CombinedOutput()
	require.NoError(t, err, "npm install %s: %s", tsSDK, out)
	return dir
}
