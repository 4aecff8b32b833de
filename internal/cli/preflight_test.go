package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/preflight"
)

func writeAgents(t *testing.T, dir, doc string) string {
	t.Helper()
	f := filepath.Join(dir, "agents.toml")
	require.NoError(t, os.WriteFile(f, []byte(doc), 0o644))
	return f
}

func TestPreflightPasses(t *testing.T) {
	needsSandbox(t)
	ws, project := workspace(t), workspace(t)
	require.NoError(t, os.Mkdir(filepath.Join(project, "data"), 0o755))
	f := writeAgents(t, project, "[zones.data]\npath = \"data\"\nmode = \"rw\"\n[[agents]]\nid = \"a\"\n[agents.sandbox]\nchangeset = \"cs\"\nzones = [{ name = \"data\", mode = \"rw\" }]\n")
	stdout, stderr, code := cli(t, ws, "preflight", "--config", f, "--agent", "a")
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
	assert.Equal(t, "preflight passed: 4 checks\n", stdout)

	stdout, _, code = cli(t, ws, "preflight", "--config", f, "--json")
	require.Equal(t, 0, code)
	var r preflight.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	assert.True(t, r.OK)
	assert.Len(t, r.Checks, 4)
}

// Every failed check is one line; the exit status is 1.
func TestPreflightFails(t *testing.T) {
	ws := workspace(t)
	f := writeAgents(t, ws, "[zones.data]\npath = \"data\"\nmode = \"rw\"\n[zones.logs]\npath = \"logs\"\n[[agents]]\nid = \"a\"\n[agents.sandbox]\nwritable_paths = [\"cache\"]\nzones = [{ name = \"data\", mode = \"rw\" }, { name = \"logs\" }]\n")
	stdout, stderr, code := cli(t, ws, "preflight", "--config", f, "--agent", "a")
	assert.Equal(t, 1, code, stderr)
	assert.Empty(t, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	assert.True(t, strings.HasPrefix(lines[0], "config: agent a: zones: /data: its changes need review"), lines[0])
	assert.Equal(t, "writable "+filepath.Join(ws, "cache")+": "+filepath.Join(ws, "cache")+" does not exist", lines[1])
	assert.Equal(t, "zone data (rw): "+filepath.Join(ws, "data")+" does not exist", lines[2])
	assert.Equal(t, "zone logs (ro): "+filepath.Join(ws, "logs")+" does not exist", lines[3])

	// A zone that needs review cannot lie in the workspace: the changeset
	// keeps the workspace's writes already.
	inside := writeAgents(t, ws, "[zones.data]\npath = \"data\"\nmode = \"rw\"\n[[agents]]\nid = \"a\"\n[agents.sandbox]\nchangeset = \""+filepath.Join(workspace(t), "cs")+"\"\nzones = [{ name = \"data\", mode = \"rw\" }]\n")
	require.NoError(t, os.Mkdir(filepath.Join(ws, "data"), 0o755))
	stdout, _, code = cli(t, ws, "preflight", "--config", inside)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "config: ")
	assert.Contains(t, stdout, "the changeset's directories must not overlap")

	// A file that does not validate is a failed check too.
	bad := writeAgents(t, workspace(t), "[[agents]]\nid = \"a\"\n[agents.sandbox]\nzones = [{ name = \"nothere\" }]\n")
	stdout, _, code = cli(t, ws, "preflight", "--config", bad)
	assert.Equal(t, 1, code)
	assert.Equal(t, "config: "+bad+":4: agents[0].sandbox.zones[0]: agent requests nothere, which project does not have\n", stdout)
	stdout, _, code = cli(t, ws, "preflight", "--config", f, "--agent", "b")
	assert.Equal(t, 1, code)
	assert.Equal(t, "config: "+f+": no agent \"b\"; the file defines a\n", stdout)
}

func TestPreflightUsage(t *testing.T) {
	for _, args := range [][]string{
		{"preflight"},
		{"preflight", "--agent", "a"},
		{"preflight", "--config", "x", "extra"},
		{"preflight", "--bogus"},
	} {
		_, stderr, code := cli(t, t.TempDir(), args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assertOneLine(t, stderr, "")
	}
}

func TestProfilePrimitives(t *testing.T) {
	ws := workspace(t)
	for platform, prefix := range map[string]string{"linux": "", "darwin": "; "} {
		stdout, stderr, code := cli(t, ws, "profile", "--platform", platform, "--net", "none")
		require.Equal(t, 0, code, stderr)
		for _, want := range []string{"primitives:", "  changeset  none", "  platform   local", "  isolation  kernel sandbox", "  outputs    none", "  software   " + platform} {
			assert.Contains(t, "\n"+stdout, "\n"+prefix+want, platform)
		}
	}
}

// An agent whose zones need review, and whose file names no changeset,
// starts under corral mcp --changeset DIR: preflight --changeset DIR passes
// it as that starts it, and fails it without, as corral mcp fails without.
func TestPreflightChangesetFromTheCommandLine(t *testing.T) {
	needsSandbox(t)
	ws, project := workspace(t), workspace(t)
	require.NoError(t, os.Mkdir(filepath.Join(project, "data"), 0o755))
	f := writeAgents(t, project, "[zones.data]\npath = \"data\"\nmode = \"rw\"\n[[agents]]\nid = \"a\"\n[agents.sandbox]\nzones = [{ name = \"data\", mode = \"rw\" }]\n")
	stdout, _, code := cli(t, ws, "preflight", "--config", f)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "its changes need review")
	stdout, stderr, code := cli(t, ws, "preflight", "--config", f, "--changeset", filepath.Join(workspace(t), "cs"))
	assert.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
	assert.Contains(t, stdout, "preflight passed")
}
