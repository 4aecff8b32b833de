package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// refusedTarget is a path the caller may write on the host and no sandbox
// lets a command write: a refusal is reported only where the sandbox is
// why a write fails. Not under /tmp, which is the sandbox's own.
func refusedTarget(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "corral-cli-report-")
	if err != nil {
		t.Skip("needs a writable /var/tmp: " + err.Error())
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "probe")
}

func refusedScript(target string) string {
	return "exec 2>/dev/null; for i in 1 2; do echo x > " + target + "; done; true"
}

// Without --report, run prints one summary line after the command, naming
// what would allow the refusal; a command refused nothing prints none.
func TestRunReportSummaryLine(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	target := refusedTarget(t)
	_, stderr, code := cli(t, ws, "run", "--", "sh", "-c", refusedScript(target))
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Len(t, lines, 1, "stderr: %q", stderr)
	assert.Equal(t, "corral: refused 2 writes (outside the writable paths), e.g. "+target+"; --writable (writable_paths) allows it", lines[0])

	_, stderr, code = cli(t, ws, "run", "--", "sh", "-c", "echo x > f")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)

	_, stderr, code = cli(t, ws, "run", "--no-report", "--", "sh", "-c", refusedScript(target))
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr, "--no-report prints nothing")
}

// --report FILE writes one JSON object per refusal, repeats merged.
func TestRunReportJSONLines(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	file := filepath.Join(workspace(t), "report.jsonl")
	target := refusedTarget(t)
	_, stderr, code := cli(t, ws, "run", "--report", file, "--", "sh", "-c", refusedScript(target)+"; echo x > ok")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr, "the report goes to the file, no summary line")
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var got []corral.Violation
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v corral.Violation
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), sc.Text())
		got = append(got, v)
	}
	require.Equal(t, []corral.Violation{{
		Kind: corral.ViolationWrite, Target: target, Rule: "outside the writable paths", Process: "sh", Count: 2,
		Allow: "--writable (writable_paths)",
	}}, got)

	stdout, stderr, code := cli(t, ws, "run", "--report", "-", "--", "sh", "-c", refusedScript(target))
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `{"kind":"write","target":"`+target+`"`)
}

func TestRunReportUsage(t *testing.T) {
	ws := workspace(t)
	_, stderr, code := cli(t, ws, "run", "--report", filepath.Join(ws, "missing", "r.jsonl"), "--", "true")
	assert.Equal(t, exitUsage, code)
	assertOneLine(t, stderr, "--report")
	_, stderr, code = cli(t, ws, "run", "--report", "-", "--no-report", "--", "true")
	assert.Equal(t, exitUsage, code)
	assertOneLine(t, stderr, "--no-report")
	_, stderr, code = cli(t, ws, "run", "--report-reads", "--no-report", "--", "true")
	assert.Equal(t, exitUsage, code)
	assertOneLine(t, stderr, "--no-report")
}

// --report-reads lists a read of a hidden path with the --hide that hides
// it; without it, the summary says nothing of the read. Without the
// sandbox, the same cat reads the file.
func TestRunReportReads(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	hidden := filepath.Join(ws, "hidden")
	require.NoError(t, os.Mkdir(hidden, 0o755))
	secret := filepath.Join(hidden, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("s\n"), 0o644))
	out, err := exec.Command("cat", secret).Output()
	require.NoError(t, err)
	require.Equal(t, "s\n", string(out), "the control reads it")
	script := "cat " + secret + " 2>/dev/null; true"
	_, stderr, code := cli(t, ws, "run", "--hide", hidden, "--report-reads", "--", "sh", "-c", script)
	require.Equal(t, 0, code, stderr)
	// The rule writes the hidden path as ~/... when it lies in the home.
	line := strings.TrimSpace(stderr)
	assert.True(t, strings.HasPrefix(line, "corral: refused 1 read (hidden by --hide "), line)
	assert.Contains(t, line, filepath.Base(hidden)+"), e.g. "+secret+"; leaving out --hide ", line)
	assert.True(t, strings.HasSuffix(line, filepath.Base(hidden)+" (hidden_paths) allows it"), line)
	_, stderr, code = cli(t, ws, "run", "--hide", hidden, "--", "sh", "-c", script)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
}
