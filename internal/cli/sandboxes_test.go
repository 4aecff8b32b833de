package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/agent"
)

// stateDir is a state directory outside /tmp, which the sandbox replaces.
func stateDir(t *testing.T) string {
	d, err := os.MkdirTemp("/var/tmp", "corral-cli-state-")
	require.NoError(t, err)
	t.Cleanup(func() { execRemoveAll(d) })
	return d
}

func execRemoveAll(d string) {
	filepath.WalkDir(d, func(p string, de os.DirEntry, err error) error {
		if de != nil && de.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.RemoveAll(d)
}

// run --scope keeps /tmp from one run to the next of the same key, lists
// the key, and rm, recreate and prune act on it; without --scope, /tmp is
// fresh each time (the control).
func TestRunScopeAndSandboxes(t *testing.T) {
	needsSandbox(t)
	ws, state := workspace(t), stateDir(t)
	_, stderr, code := cli(t, ws, "run", "--scope", "job-1", "--state-dir", state, "--", "sh", "-c", "echo kept > /tmp/f")
	require.Equal(t, 0, code, stderr)
	out, stderr, code := cli(t, ws, "run", "--scope", "job-1", "--state-dir", state, "--", "cat", "/tmp/f")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "kept\n", out)
	_, _, code = cli(t, ws, "run", "--scope", "job-2", "--state-dir", state, "--", "cat", "/tmp/f")
	assert.NotEqual(t, 0, code, "another scope has its own /tmp")
	_, _, code = cli(t, ws, "run", "--", "sh", "-c", "echo x > /tmp/g")
	require.Equal(t, 0, code)
	_, _, code = cli(t, ws, "run", "--", "cat", "/tmp/g")
	assert.NotEqual(t, 0, code, "control: a run without --scope starts with an empty /tmp")

	out, stderr, code = cli(t, ws, "sandboxes", "list", "--json", "--state-dir", state)
	require.Equal(t, 0, code, stderr)
	var es []agent.Entry
	require.NoError(t, json.Unmarshal([]byte(out), &es))
	require.Len(t, es, 2)
	assert.Equal(t, "job-1", es[0].Key)
	assert.Equal(t, agent.Slug("job-1"), es[0].Slug)
	out, _, code = cli(t, ws, "sandboxes", "list", "--state-dir", state)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "job-1")

	out, stderr, code = cli(t, ws, "sandboxes", "recreate", "job-1", "--state-dir", state)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "recreated job-1\n", out)
	_, _, code = cli(t, ws, "run", "--scope", "job-1", "--state-dir", state, "--", "cat", "/tmp/f")
	assert.NotEqual(t, 0, code, "recreated: /tmp is new")

	_, stderr, code = cli(t, ws, "sandboxes", "rm", "job-2", "--state-dir", state)
	require.Equal(t, 0, code, stderr)
	out, _, _ = cli(t, ws, "sandboxes", "list", "--state-dir", state)
	assert.NotContains(t, out, "job-2")
	_, stderr, code = cli(t, ws, "sandboxes", "rm", "job-2", "--state-dir", state)
	assert.Equal(t, 1, code)
	assertOneLine(t, stderr, `no sandbox "job-2"`)

	_, stderr, code = cli(t, ws, "sandboxes", "prune", "--state-dir", state)
	require.Equal(t, 0, code, stderr)
	_, stderr, code = cli(t, ws, "sandboxes", "rm", "--all", "--state-dir", state)
	require.Equal(t, 0, code, stderr)
	out, _, _ = cli(t, ws, "sandboxes", "list", "--state-dir", state)
	assert.Equal(t, "no persistent sandboxes\n", out)
	entries, _ := os.ReadDir(filepath.Join(state, "sandboxes"))
	assert.Empty(t, entries, "their state went with them")
}

func TestSandboxesUsage(t *testing.T) {
	ws, state := workspace(t), stateDir(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sandboxes", "rm", "--state-dir", state}, "give KEY... or --all"},
		{[]string{"sandboxes", "rm", "--all", "x", "--state-dir", state}, "give KEY... or --all"},
		{[]string{"sandboxes", "recreate", "--state-dir", state}, "accepts 1 arg"},
		{[]string{"sandboxes", "list", "--config", filepath.Join(ws, "missing.toml")}, "missing.toml"},
		{[]string{"run", "--state-dir", state, "--", "true"}, "--state-dir needs --scope"},
	} {
		t.Run(strings.Join(tt.args[:2], " "), func(t *testing.T) {
			_, stderr, code := cli(t, ws, tt.args...)
			assert.Equal(t, 2, code, stderr)
			assertOneLine(t, stderr, tt.want)
		})
	}
}
