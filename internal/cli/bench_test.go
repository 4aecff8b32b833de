package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/bench"
)

func TestBenchBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"zero runs", []string{"--runs", "0"}, "--runs 0: want at least 1"},
		{"negative parallel", []string{"--parallel", "-2"}, "--parallel -2: want at least 1"},
		{"runs not a number", []string{"--runs", "many"}, `"many"`},
		{"heap unit", []string{"--parent-heap", "2GX"}, `--parent-heap: size "2GX"`},
		{"heap negative", []string{"--parent-heap", "-1GiB"}, `--parent-heap: size "-1GiB"`},
		{"heap beyond memory", []string{"--parent-heap", "64TiB"}, "--parent-heap 64TiB: more than the"},
		{"stray argument", []string{"now"}, "unknown command"},
		{"workspace missing", []string{"--workspace", "/no/such/dir"}, "--workspace /no/such/dir: no such directory"},
		{"workspace a file", []string{"--workspace", "/etc/hostname"}, "--workspace /etc/hostname: not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := cli(t, t.TempDir(), append([]string{"bench"}, tc.args...)...)
			assert.Equal(t, exitUsage, code, "stderr: %s", stderr)
			assertOneLine(t, stderr, tc.stderr)
		})
	}
}

func TestBenchJSON(t *testing.T) {
	needsSandbox(t)
	stdout, stderr, code := cli(t, t.TempDir(), "bench", "--runs", "5", "--json")
	require.Equal(t, 0, code, stderr)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &m), stdout)
	assert.Equal(t, 5.0, m["runs"])
	for _, k := range []string{"p50_us", "p90_us", "p99_us", "per_sec", "init_rss_kb"} {
		assert.Positive(t, m[k], k)
	}
	assert.NotContains(t, m, "ratio_p50")
}

func TestBenchTable(t *testing.T) {
	needsSandbox(t)
	stdout, stderr, code := cli(t, t.TempDir(), "bench", "--runs", "3", "--parallel", "2", "--direct")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "corral bench: 3 runs of /bin/true, parallel 2, parent heap 0 B, direct clone\n")
	assert.Regexp(t, `(?m)^corral +\d+ +\d+ +\d+ +\d+\.\d$`, stdout)
	assert.Regexp(t, `(?m)^init peak RSS +\d+ KiB$`, stdout)
}

func TestBenchWorkspace(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "node_modules", "a"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "node_modules", "a", "index.js"), []byte("x\n"), 0o644))
	stdout, stderr, code := cli(t, t.TempDir(), "bench", "--runs", "3", "--workspace", ws)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, ", workspace "+ws+"\n")
	assert.Regexp(t, `(?m)^corral +\d+ +\d+ +\d+ +\d+\.\d$`, stdout)
	// The workspace is the caller's: left in place with what it held.
	b, err := os.ReadFile(filepath.Join(ws, "node_modules", "a", "index.js"))
	require.NoError(t, err)
	assert.Equal(t, "x\n", string(b))

	// A relative DIR is taken from the current directory.
	stdout, stderr, code = cli(t, filepath.Dir(ws), "bench", "--runs", "1", "--json", "--workspace", filepath.Base(ws))
	require.Equal(t, 0, code, stderr)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &m), stdout)
	assert.Equal(t, ws, m["workspace"])
}

func TestBenchWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, stderr, code := cli(t, t.TempDir(), "bench", "--runs", "1", "--vs-bwrap")
	assert.Equal(t, 1, code)
	assertOneLine(t, stderr, "bwrap not found on PATH")
}

func TestBenchErrorExitStatuses(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{&bench.SandboxError{Op: "spawn /bin/true", Err: errors.New("no user namespaces")}, exitSetup},
		{&corral.SetupError{Layer: corral.LayerMount, Err: errors.New("denied")}, exitSetup},
		{&corral.ConfigError{Field: "Workspace", Reason: "required"}, exitSetup},
		{errors.New("bwrap not found"), 1},
	} {
		var ee *exitError
		require.ErrorAs(t, benchError(tc.err), &ee)
		assert.Equal(t, tc.code, ee.code, tc.err.Error())
		assert.Equal(t, tc.err.Error(), ee.msg)
	}
}
