package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/browser"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// needsBrowser skips t when no Chromium is installed or the sandbox
// cannot be built.
func needsBrowser(t *testing.T) {
	t.Helper()
	if _, err := browser.Find(); err != nil {
		t.Skip(err.Error())
	}
	sandboxtest.Require(t, corral.Config{Network: corral.NetworkAllow})
}

// startBrowserCLI starts `corral browser args...` and returns it with the
// first line of its standard output; its standard error goes to stderr.
func startBrowserCLI(t *testing.T, stderr io.Writer, args ...string) (*exec.Cmd, string) {
	t.Helper()
	c := exec.Command(os.Args[0], append([]string{"browser"}, args...)...)
	c.Env = append(os.Environ(), cliEnv+"=1")
	c.Dir = workspace(t)
	c.Stderr = stderr
	out, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "no endpoint printed")
	return c, strings.TrimSpace(line)
}

// descendants are the processes below pid, by /proc's parent links.
func descendants(pid int) map[int]string {
	parent := map[int]int{}
	comm := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < 0 {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p], comm[p] = pp, s[open+1:close]
	}
	out := map[int]string{}
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out[p] = comm[p]
				break
			}
		}
	}
	return out
}

// alive reports whether pid is a process that has not exited.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// The browser's processes die with `corral browser`, even when it is
// killed with SIGKILL and cannot end them itself.
func TestBrowserDiesWithCaller(t *testing.T) {
	needsBrowser(t)
	c, endpoint := startBrowserCLI(t, io.Discard)
	require.True(t, strings.HasPrefix(endpoint, "http://127.0.0.1:"), endpoint)
	procs := descendants(c.Process.Pid)
	var chromium []int
	for p, name := range procs {
		if strings.Contains(name, "chrom") {
			chromium = append(chromium, p)
		}
	}
	require.NotEmpty(t, chromium, "Chromium runs below corral: %v", procs)

	require.NoError(t, c.Process.Signal(syscall.SIGKILL))
	c.Wait()
	for _, p := range chromium {
		for alive(p) {
			time.Sleep(20 * time.Millisecond) // the test's own timeout bounds this
		}
	}
}

// A second `corral browser --scope S` of the same configuration reuses
// the first's browser: the same endpoint, one entry of kind browser, and it
// ends when the first does.
func TestBrowserScopeReused(t *testing.T) {
	needsBrowser(t)
	state := workspace(t)
	args := []string{"--scope", "s1", "--state-dir", state}
	first, endpoint := startBrowserCLI(t, io.Discard, args...)
	var stderr strings.Builder
	second, again := startBrowserCLI(t, &stderr, args...)
	assert.Equal(t, endpoint, again)

	out, _, code := cli(t, state, "sandboxes", "list", "--json", "--state-dir", state)
	require.Equal(t, 0, code)
	var es []struct{ Key, Kind string }
	require.NoError(t, json.Unmarshal([]byte(out), &es))
	assert.Equal(t, []struct{ Key, Kind string }{{"browser:s1", "browser"}}, es)

	// Another configuration does not get the running browser.
	_, errOut, code := cli(t, state, append([]string{"browser", "--allow-domain", "example.com"}, args...)...)
	assert.Equal(t, exitSetup, code)
	assertOneLine(t, errOut, "another configuration")

	require.NoError(t, first.Process.Signal(syscall.SIGTERM))
	assert.NoError(t, first.Wait())
	assert.NoError(t, second.Wait(), stderr.String())

	// The profile stays in the scope's state for the next browser.
	profiles, err := filepath.Glob(filepath.Join(state, "sandboxes", "*", "tmp", "corral-browser", "profile"))
	require.NoError(t, err)
	assert.Len(t, profiles, 1)
}

// `corral mcp --browser` offers the browser tools, which drive a sandboxed
// browser: with --net allow by default, a page of a name no flag allows is
// a network error.
func TestMCPBrowser(t *testing.T) {
	needsBrowser(t)
	ws := workspace(t)
	cs, eof := mcpClient(t, ws, "--workspace", ws, "--browser")
	res, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	assert.Subset(t, names, []string{"browser_navigate", "browser_snapshot", "browser_screenshot", "browser_click", "browser_type"})

	got, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": "http://93.184.215.14/"}})
	require.NoError(t, err)
	assert.True(t, got.IsError)
	assert.Contains(t, toolText(got), "net::ERR_")
	require.NoError(t, eof())
}

// Bad flags are usage errors, and a missing Chromium is named with its
// package, before anything starts.
func TestBrowserUsage(t *testing.T) {
	dir := workspace(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"browser", "--port", "70000"}, "--port 70000"},
		{[]string{"browser", "--review"}, "not for the browser"},
		{[]string{"browser", "--net", "nowhere"}, "--net"},
	} {
		_, stderr, code := cli(t, dir, c.args...)
		assert.Equal(t, exitUsage, code, c.args)
		assertOneLine(t, stderr, c.want)
	}
	cmd := exec.Command(os.Args[0], "browser")
	cmd.Env = append(os.Environ(), cliEnv+"=1", "PATH=/nonexistent")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, exitSetup, cmd.ProcessState.ExitCode())
	assertOneLine(t, string(out), "apt-get install chromium")
}
