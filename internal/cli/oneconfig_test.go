package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oneConfig writes a file whose agents each ask for what only some entry
// points used to give: a read-only workspace, zones, a zone whose changes
// need review, a workspace of the sandbox's own.
func oneConfig(t *testing.T) (ws, data, out, conf string) {
	t.Helper()
	ws, dir := workspace(t), workspace(t)
	data, out = filepath.Join(dir, "data"), filepath.Join(dir, "out")
	for _, d := range []string{data, out, filepath.Join(dir, "review")} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(data, "in.txt"), []byte("input\n"), 0o644))
	conf = filepath.Join(workspace(t), "agents.toml")
	require.NoError(t, os.WriteFile(conf, []byte(fmt.Sprintf(`
[zones.data]
path = %q
mode = "ro"
[zones.out]
path = %q
mode = "rw"
approval = { write = "preApproved", delete = "preApproved" }
[zones.review]
path = %q
mode = "rw"
[[agents]]
id = "plain"
[[agents]]
id = "reader"
[agents.sandbox]
workspace_access = "ro"
[[agents]]
id = "zoned"
[agents.sandbox]
zones = [{ name = "data" }, { name = "out", mode = "rw" }]
[[agents]]
id = "reviewed"
[agents.sandbox]
zones = [{ name = "review", mode = "rw" }]
[[agents]]
id = "reviewed-cs"
[agents.sandbox]
changeset = %q
zones = [{ name = "review", mode = "rw" }]
[[agents]]
id = "own"
[agents.sandbox]
workspace_access = "none"
`, data, out, filepath.Join(dir, "review"), filepath.Join(dir, "cs"))), 0o644))
	return ws, data, out, conf
}

// TestConfigMeansOneSandbox: corral run and corral profile apply an
// agent's workspace_access and zones as corral mcp does; what a sandbox
// made for one command cannot give is refused naming the key, and
// preflight fails exactly for the agents that cannot start, with the same
// reason. The plain agent, the control, writes its workspace and sees no
// zone.
func TestConfigMeansOneSandbox(t *testing.T) {
	needsSandbox(t)
	ws, _, out, conf := oneConfig(t)
	run := func(agent, script string) (string, string, int) {
		return cli(t, ws, "run", "--workspace", ws, "--config", conf, "--agent", agent, "--", "sh", "-c", script)
	}

	_, stderr, code := run("plain", "echo x > w.txt; ls /data")
	assert.NotEqual(t, 0, code, "control: no zone without declaring one")
	assert.FileExists(t, filepath.Join(ws, "w.txt"), "control: the plain agent writes its workspace; stderr: %s", stderr)

	_, _, code = run("reader", "echo x > r.txt")
	assert.NotEqual(t, 0, code)
	assert.NoFileExists(t, filepath.Join(ws, "r.txt"), `workspace_access = "ro" holds for corral run`)

	stdout, stderr, code := run("zoned", "cat /data/in.txt && echo done > /out/result.txt")
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, "input\n", stdout)
	assert.FileExists(t, filepath.Join(out, "result.txt"))

	stdout, stderr, code = cli(t, ws, "profile", "--workspace", ws, "--config", conf, "--agent", "zoned")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "ro-bind  /data (from ")

	for _, tc := range []struct{ agent, want string }{
		{"reviewed", "agent reviewed: zones: /review: its changes need review"},
		{"own", `agent own: workspace_access: "none" gives the sandbox a workspace of its own`},
	} {
		_, stderr, code = run(tc.agent, "true")
		assert.Equal(t, exitUsage, code, stderr)
		assertOneLine(t, stderr, tc.want)
		_, stderr, code = cli(t, ws, "profile", "--workspace", ws, "--config", conf, "--agent", tc.agent)
		assert.Equal(t, exitUsage, code, stderr)
		assertOneLine(t, stderr, tc.want)
	}

	// Preflight fails for the agent no entry point can start, naming why,
	// and passes those that start.
	stdout, _, code = cli(t, ws, "preflight", "--workspace", ws, "--config", conf, "--agent", "reviewed")
	assert.Equal(t, 1, code, stdout)
	assert.Contains(t, stdout, "config: agent reviewed: zones: /review: its changes need review")
	for _, agent := range []string{"plain", "reader", "zoned", "reviewed-cs", "own"} {
		stdout, _, code = cli(t, ws, "preflight", "--workspace", ws, "--config", conf, "--agent", agent)
		assert.Equal(t, 0, code, "%s: %s", agent, stdout)
	}
	_, stderr, code = cli(t, ws, "run", "--workspace", ws, "--config", conf, "--agent", "reviewed-cs", "--", "true")
	assert.Equal(t, 0, code, stderr)
}

// The defaults a new user trips on are said up front in run's help: the
// host's network unless --net, no cache kept without --scope.
func TestRunHelpSaysTheDefaults(t *testing.T) {
	stdout, _, code := cli(t, t.TempDir(), "run", "--help")
	assert.Equal(t, 0, code)
	for _, want := range []string{"the network is the host's, unfiltered, unless --net none or\n--net allow", "caches (npm, pip, go) do not persist unless --scope KEY"} {
		assert.Contains(t, stdout, want)
	}
}
