package cli

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Keys are built at run time so the sources hold nothing a scanner reports.
var (
	testAnthropic = "sk-ant-api03-" + strings.Repeat("Ex4mpLeK3y9", 8)
	testGitHub    = "ghp_" + strings.Repeat("Ex4mpLeK3y9", 4)[:36]
)

// runScanCmd runs `corral scan ARGS` in process and returns its output and
// exit status.
func runScanCmd(t *testing.T, stdin string, args ...string) (string, int, error) {
	t.Helper()
	root := newRootCmd(nil)
	root.SetArgs(append([]string{"scan"}, args...))
	root.SetIn(strings.NewReader(stdin))
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.Execute()
	var ee *exitError
	switch {
	case err == nil:
		return out.String(), 0, nil
	case errors.As(err, &ee):
		return out.String(), ee.code, err
	}
	return out.String(), exitUsage, err
}

func TestScanCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	clean := write("clean.log", "build ok\ncommit 3f2a9c1e0b7d4a5f6e8c9b0a1d2e3f4a5b6c7d8e\n")
	encoded := write("encoded.txt", base64.StdEncoding.EncodeToString([]byte(testGitHub))+"\n")
	two := write("two.env", "A="+testAnthropic+"\nB="+testGitHub+"\n")
	missing := filepath.Join(dir, "missing")

	cases := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		output string
		errMsg string
	}{
		{name: "clean stdin", stdin: "hello\n", code: 0},
		{name: "secret on stdin", stdin: "hello\nkey=" + testAnthropic + "\n", code: 1,
			output: "stdin:2: anthropic (plain) sk-a…(101 chars) at offset 10\n"},
		{name: "dash is stdin", stdin: testGitHub, args: []string{"-"}, code: 1,
			output: "stdin:1: github (plain) ghp_…(40 chars) at offset 0\n"},
		{name: "clean file", args: []string{clean}, code: 0},
		{name: "base64 in a file", args: []string{encoded}, code: 1,
			output: encoded + ":1: github (base64) ghp_…(40 chars) at offset 0\n"},
		{name: "one line per finding", args: []string{two}, code: 1,
			output: two + ":1: anthropic (plain) sk-a…(101 chars) at offset 2\n" +
				two + ":2: github (plain) ghp_…(40 chars) at offset 106\n"},
		{name: "missing file", args: []string{missing}, code: 2,
			errMsg: "scan: open " + missing + ": no such file or directory"},
		{name: "directory", args: []string{dir}, code: 2,
			errMsg: "scan: read " + dir + ": is a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, code, err := runScanCmd(t, tc.stdin, tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.output, out)
			if tc.errMsg != "" {
				require.Error(t, err)
				assert.Equal(t, tc.errMsg, err.Error())
			}
			assert.NotContains(t, out, testAnthropic[4:])
			assert.NotContains(t, out, testGitHub[4:])
		})
	}
}

func TestScanCommandRejectsTwoFiles(t *testing.T) {
	_, code, err := runScanCmd(t, "", "a", "b")
	assert.Equal(t, exitUsage, code)
	assert.ErrorContains(t, err, "accepts at most 1 arg")
}

// TestScanBinary runs the real CLI in its own process: exit statuses, what
// goes to stdout and stderr, and no stack trace on bad input.
func TestScanBinary(t *testing.T) {
	dir := workspace(t)
	leaky := filepath.Join(dir, "leaky.txt")
	require.NoError(t, os.WriteFile(leaky, []byte("token: "+testGitHub+"\n"), 0o600))
	clean := filepath.Join(dir, "clean.txt")
	require.NoError(t, os.WriteFile(clean, []byte("nothing here\n"), 0o600))
	missing := filepath.Join(dir, "nope")

	stdout, stderr, code := cli(t, dir, "scan", clean)
	assert.Equal(t, 0, code)
	assert.Empty(t, stdout+stderr)

	stdout, stderr, code = cli(t, dir, "scan", leaky)
	assert.Equal(t, 1, code)
	assert.Equal(t, leaky+":1: github (plain) ghp_…(40 chars) at offset 7\n", stdout)
	assert.Empty(t, stderr)

	stdout, stderr, code = cli(t, dir, "scan", missing)
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "corral: scan: open "+missing+": no such file or directory\n", stderr)

	_, stderr, code = cli(t, dir, "scan", "a", "b")
	assert.Equal(t, 2, code)
	assertOneLine(t, stderr, "accepts at most 1 arg(s), received 2")
}

// BenchmarkScanCommand measures `corral scan` end to end on 8 MiB of build
// output with a secret in every MiB, as a tool's log might hold: reading,
// scanning and printing the findings. The hooks benchmarks break the
// scanner's share down by kind of text.
func BenchmarkScanCommand(b *testing.B) {
	var log strings.Builder
	for i := 0; log.Len() < 8<<20; i++ {
		fmt.Fprintf(&log, "2025-01-02T12:00:%02dZ INFO step=%d id=%08x-%04x path=/api/v1/items?page=%d status=200\n", i%60, i, i*2654435761, i%65536, i%9)
		if i%10000 == 0 {
			fmt.Fprintf(&log, "export TOKEN=%s\n", testAnthropic)
		}
	}
	data := log.String()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		err := scanInput(strings.NewReader(data), io.Discard, nil)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitFound {
			b.Fatalf("want findings (exit %d), got %v", exitFound, err)
		}
	}
}
