package cli

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPUsageErrors(t *testing.T) {
	ws := workspace(t)
	badPolicy := filepath.Join(ws, "agents.toml")
	require.NoError(t, os.WriteFile(badPolicy, []byte("[[agents]]\nid = \"a\"\n[agents.tools]\ndeny = [\"rm -rf\"]\n"), 0o644))
	agents := filepath.Join(ws, "agents2.toml")
	require.NoError(t, os.WriteFile(agents, []byte(`
[[agents]]
id = "a"
[[agents]]
id = "b"
[agents.sandbox]
workspace_access = "none"
[[agents]]
id = "c"
[agents.sandbox]
mode = "off"
[[agents]]
id = "d"
main_session = "main"
[agents.sandbox]
mode = "non-main"
`), 0o644))
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"any address", `"0.0.0.0" is not a loopback address`, []string{"--http", "0.0.0.0:8765"}},
		{"no host", `"" is not a loopback address`, []string{"--http", ":8765"}},
		{"public address", `"192.0.2.1" is not a loopback address`, []string{"--http", "192.0.2.1:8765"}},
		{"host name", `"example.com" is not a loopback address`, []string{"--http", "example.com:8765"}},
		{"no port", "want HOST:PORT", []string{"--http", "127.0.0.1"}},
		{"review", "--review: not for mcp", []string{"--changeset", filepath.Join(t.TempDir(), "c"), "--review"}},
		{"cwd", "--cwd: not for mcp", []string{"--cwd", ws}},
		{"bad tool pattern", `agents[0].tools.deny[0]: "rm -rf" is not a tool name`, []string{"--config", badPolicy}},
		{"arguments", "unknown command", []string{"shell"}},
		{"report", "--report, --no-report, --report-reads: not for mcp", []string{"--report", "-"}},
		{"no report", "--report, --no-report, --report-reads: not for mcp", []string{"--no-report"}},
		{"report reads", "--report, --no-report, --report-reads: not for mcp", []string{"--report-reads"}},
		{"outlive parent", "--no-die-with-parent: not for mcp", []string{"--no-die-with-parent"}},
		{"session without config", "--session needs --config", []string{"--session", "s"}},
		{"session with sandbox flags", "--hide, --net: not with --session", []string{"--config", agents, "--session", "s", "--net", "none", "--hide", ws}},
		{"session with scope", "--scope: not with --session", []string{"--config", agents, "--session", "s", "--scope", "k"}},
		{"no access without session", `agent b: workspace_access: "none" gives the sandbox a workspace of its own`, []string{"--config", agents, "--agent", "b"}},
		{"unsandboxed agent", `agent c runs unsandboxed (mode = "off")`, []string{"--config", agents, "--agent", "c"}},
		{"unsandboxed session", `agent c runs session "s" unsandboxed (mode = "off")`, []string{"--config", agents, "--agent", "c", "--session", "s", "--state-dir", t.TempDir()}},
		{"unsandboxed main session", `agent d runs session "main" unsandboxed (mode = "non-main")`, []string{"--config", agents, "--agent", "d", "--session", "main", "--state-dir", t.TempDir()}},
		{"unknown agent", `no agent "e"`, []string{"--config", agents, "--agent", "e", "--session", "s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := cliAt(t, mcpCLI(t), ws, append([]string{"mcp"}, tc.args...)...)
			assert.Equal(t, exitUsage, code, stderr)
			assertOneLine(t, stderr, tc.want)
		})
	}
}

// mcpClient starts `corral mcp args...` in dir and connects the SDK's
// client to it over stdio. It returns the session and a function that
// closes the server's stdin and waits for it to exit.
func mcpClient(t *testing.T, dir string, args ...string) (*mcp.ClientSession, func() error) {
	t.Helper()
	return mcpClientWith(t, dir, nil, args...)
}

// mcpClientWith is mcpClient with a client of the options given.
func mcpClientWith(t *testing.T, dir string, opts *mcp.ClientOptions, args ...string) (*mcp.ClientSession, func() error) {
	t.Helper()
	c := exec.Command(mcpCLI(t), append([]string{"mcp"}, args...)...)
	c.Env = append(os.Environ(), cliEnv+"=1")
	c.Dir = dir
	c.Stderr = os.Stderr
	stdin, err := c.StdinPipe()
	require.NoError(t, err)
	stdout, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill() })
	tr := &mcp.IOTransport{Reader: stdout, Writer: stdin}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "0"}, opts).Connect(context.Background(), tr, nil)
	require.NoError(t, err)
	return cs, func() error {
		stdin.Close()
		return c.Wait()
	}
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPStdio: the server offers what the agent's policy allows, runs
// calls in the sandbox, and at end of file on stdin exits 0 having killed
// the command still running.
func TestMCPStdio(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	conf := filepath.Join(t.TempDir(), "agents.toml")
	require.NoError(t, os.WriteFile(conf, []byte(`
[defaults.tools]
deny = ["exec"]
[[agents]]
id = "coder"
[agents.tools]
allow = ["shell", "*_file"]
`), 0o644))
	cs, eof := mcpClient(t, ws, "--workspace", ws, "--config", conf, "--agent", "coder")

	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, []string{"shell", "read_file", "write_file", "edit_file"}, names)

	got, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": "echo in the sandbox > note; cat note; echo x > /etc/corral-mcp-test"}})
	require.NoError(t, err)
	assert.Contains(t, toolText(got), "in the sandbox")
	assert.Contains(t, toolText(got), "Read-only file system")
	assert.NoFileExists(t, "/etc/corral-mcp-test")

	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{
		"command": "echo started > started; sleep 1800; echo finished > finished", "timeout_seconds": 1800,
	}})
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(ws, "started")); return err == nil },
		time.Minute, 10*time.Millisecond)
	// The server exits, with status 0, only once it has killed the
	// sleeping command: it would wait half an hour otherwise.
	require.NoError(t, eof())
	assert.NoFileExists(t, filepath.Join(ws, "finished"))
}

// TestMCPHTTP: --http serves the streamable HTTP transport on loopback
// until the server is interrupted.
func TestMCPHTTP(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	c := exec.Command(mcpCLI(t), "mcp", "--workspace", ws, "--http", "127.0.0.1:0")
	c.Env = append(os.Environ(), cliEnv+"=1")
	stderr, err := c.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err)
	_, url, ok := strings.Cut(strings.TrimSpace(line), "serving MCP on ")
	require.True(t, ok, line)
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	got, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": "echo over http"}})
	require.NoError(t, err)
	assert.Contains(t, toolText(got), "over http")
	cs.Close()

	require.NoError(t, c.Process.Signal(syscall.SIGTERM))
	require.NoError(t, c.Wait(), "SIGTERM ends the server cleanly")
}

// TestMCPReadOnlyWorkspaceAccess: an agent whose workspace_access is "ro"
// is offered no tool that writes files, and its commands cannot write the
// workspace either; the same file without it offers them and writes, the
// control.
func TestMCPReadOnlyWorkspaceAccess(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	for _, c := range []struct {
		access  string
		want    []string
		written bool
	}{
		{"rw", []string{"shell", "read_file", "write_file", "edit_file", "list_files"}, true},
		{"ro", []string{"shell", "read_file", "list_files"}, false},
	} {
		t.Run(c.access, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "agents.toml")
			require.NoError(t, os.WriteFile(conf, []byte(`
[[agents]]
id = "reader"
[agents.tools]
allow = ["shell", "*_file", "list_files"]
[agents.sandbox]
workspace_access = "`+c.access+`"
`), 0o644))
			cs, eof := mcpClient(t, ws, "--workspace", ws, "--config", conf, "--agent", "reader")
			res, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			assert.ElementsMatch(t, c.want, names)
			got := shellCall(t, cs, "echo x > written-"+c.access)
			assert.Equal(t, c.written, fileExists(filepath.Join(ws, "written-"+c.access)), got)
			require.NoError(t, eof())
		})
	}
}

func shellCall(t *testing.T, cs *mcp.ClientSession, command string) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": command}})
	require.NoError(t, err)
	return toolText(res)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestMCPScope: --scope keeps /tmp from one server to the next naming the
// same key; another key, the control, starts empty.
func TestMCPScope(t *testing.T) {
	needsSandbox(t)
	ws, state := workspace(t), t.TempDir()
	cs, eof := mcpClient(t, ws, "--workspace", ws, "--scope", "job-1", "--state-dir", state)
	shellCall(t, cs, "echo kept > /tmp/f")
	require.NoError(t, eof())

	cs, eof = mcpClient(t, ws, "--workspace", ws, "--scope", "job-1", "--state-dir", state)
	assert.Contains(t, shellCall(t, cs, "cat /tmp/f"), "kept")
	require.NoError(t, eof())

	cs, eof = mcpClient(t, ws, "--workspace", ws, "--scope", "job-2", "--state-dir", state)
	assert.Contains(t, shellCall(t, cs, "cat /tmp/f"), "No such file")
	require.NoError(t, eof())
}

// TestMCPSession: --session serves the agent's session through the agent
// runtime. With workspace_access "ro" the sandbox has a workspace of its
// own, the agent's read-only at /agent, and no tool that writes files;
// sessions share that workspace when the scope is the agent's, and do not
// under scope "session", the control.
func TestMCPSession(t *testing.T) {
	needsSandbox(t)
	for _, c := range []struct {
		scope  string
		shared bool
	}{{"agent", true}, {"session", false}} {
		t.Run(c.scope, func(t *testing.T) {
			ws, state := workspace(t), t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(ws, "agent-file"), []byte("the agent's\n"), 0o644))
			conf := filepath.Join(t.TempDir(), "agents.toml")
			require.NoError(t, os.WriteFile(conf, []byte(`
[[agents]]
id = "helper"
[agents.sandbox]
scope = "`+c.scope+`"
workspace_access = "ro"
`), 0o644))
			args := []string{"--workspace", ws, "--config", conf, "--state-dir", state, "--session"}
			cs, eof := mcpClient(t, ws, append(args, "chat-1")...)
			res, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			assert.ElementsMatch(t, []string{"shell", "exec", "read_file", "list_files"}, names)
			assert.Contains(t, shellCall(t, cs, "pwd; cat /agent/agent-file"), "/workspace\nthe agent's")
			assert.Contains(t, shellCall(t, cs, "echo x > /agent/planted"), "Read-only file system")
			assert.NoFileExists(t, filepath.Join(ws, "planted"))
			shellCall(t, cs, "echo mine > own")
			assert.Contains(t, shellCall(t, cs, "cat own"), "mine")
			require.NoError(t, eof())

			cs, eof = mcpClient(t, ws, append(args, "chat-2")...)
			got := shellCall(t, cs, "cat own")
			if c.shared {
				assert.Contains(t, got, "mine", "the agent's scope is one sandbox for every session")
			} else {
				assert.Contains(t, got, "No such file", "each session has its own sandbox")
			}
			require.NoError(t, eof())
			assert.NoFileExists(t, filepath.Join(ws, "own"), "the own workspace is not the agent's")
		})
	}
}

// TestMCPSignalKillsCalls: SIGTERM during a call ends the server cleanly
// (exit 0) once it has killed the command, which would otherwise run for
// half an hour.
func TestMCPSignalKillsCalls(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	c := exec.Command(mcpCLI(t), "mcp", "--workspace", ws)
	c.Env = append(os.Environ(), cliEnv+"=1")
	c.Stderr = os.Stderr
	stdin, err := c.StdinPipe()
	require.NoError(t, err)
	stdout, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() { stdin.Close(); c.Process.Kill() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "0"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	require.NoError(t, err)
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{
		"command": "echo started > started; sleep 1800; echo finished > finished", "timeout_seconds": 1800,
	}})
	require.Eventually(t, func() bool { return fileExists(filepath.Join(ws, "started")) }, time.Minute, 10*time.Millisecond)
	require.NoError(t, c.Process.Signal(syscall.SIGTERM))
	require.NoError(t, c.Wait(), "SIGTERM ends the server cleanly")
	assert.NoFileExists(t, filepath.Join(ws, "finished"))
}

// TestMCPZones: an agent that declares zones gets file tools over them
// (/NAME/..., a read-only zone refusing writes) and commands that see the
// same zones at the same paths; a zone whose changes need review without
// a changeset is a usage error.
func TestMCPZones(t *testing.T) {
	needsSandbox(t)
	ws, dir := workspace(t), workspace(t)
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	require.NoError(t, os.Mkdir(data, 0o755))
	require.NoError(t, os.Mkdir(out, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "review"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(data, "in.txt"), []byte("input\n"), 0o644))
	conf := filepath.Join(t.TempDir(), "agents.toml")
	require.NoError(t, os.WriteFile(conf, []byte(`
[zones.data]
path = "`+data+`"
mode = "ro"
[zones.out]
path = "`+out+`"
mode = "rw"
approval = { write = "preApproved", delete = "preApproved" }
[zones.review]
path = "`+dir+`/review"
mode = "rw"
[[agents]]
id = "worker"
[agents.sandbox]
zones = [{ name = "data" }, { name = "out", mode = "rw" }]
[[agents]]
id = "reviewed"
[agents.sandbox]
zones = [{ name = "review", mode = "rw" }]
`), 0o644))
	_, stderr, code := cliAt(t, mcpCLI(t), ws, "mcp", "--workspace", ws, "--config", conf, "--agent", "reviewed")
	assert.Equal(t, exitUsage, code, stderr)
	assertOneLine(t, stderr, "/review: its changes need review")
	_, stderr, code = cliAt(t, mcpCLI(t), ws, "mcp", "--config", conf, "--agent", "reviewed", "--session", "s", "--state-dir", t.TempDir())
	assert.Equal(t, exitUsage, code, stderr)
	assertOneLine(t, stderr, "/review: its changes need review")

	// --session serves the zones too, the agent runtime's sandbox
	// showing them at the same paths.
	cs, eof := mcpClient(t, ws, "--workspace", ws, "--config", conf, "--agent", "worker", "--session", "s", "--state-dir", t.TempDir())
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_files", Arguments: map[string]any{"path": "/"}})
	require.NoError(t, err)
	assert.Equal(t, "data/\nout/\n", toolText(res))
	assert.Contains(t, shellCall(t, cs, "cat /data/in.txt"), "input\n")
	require.NoError(t, eof())

	cs, eof = mcpClient(t, ws, "--workspace", ws, "--config", conf, "--agent", "worker")
	call := func(tool string, args map[string]any) (string, bool) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err)
		return toolText(res), res.IsError
	}
	got, isErr := call("list_files", map[string]any{})
	assert.False(t, isErr, got)
	assert.Equal(t, "data/\nout/\n", got)
	got, _ = call("read_file", map[string]any{"path": "/data/in.txt"})
	assert.Equal(t, "input\n", got)
	got, isErr = call("write_file", map[string]any{"path": "/data/x", "content": "x"})
	assert.True(t, isErr)
	assert.Contains(t, got, "read-only file system")
	got, isErr = call("write_file", map[string]any{"path": "/out/result.txt", "content": "done\n"})
	assert.False(t, isErr, got)
	assert.Contains(t, shellCall(t, cs, "cat /data/in.txt /out/result.txt; echo y > /data/y"), "input\ndone\n")
	require.NoError(t, eof())
	assert.True(t, fileExists(filepath.Join(out, "result.txt")))
	assert.False(t, fileExists(filepath.Join(data, "x")))
	assert.False(t, fileExists(filepath.Join(data, "y")), "commands cannot write a read-only zone either")

	// A zone whose writes ask: the client's user is asked (elicitation),
	// and a client that cannot ask is refused, told why.
	review := []string{"--workspace", ws, "--config", conf, "--agent", "reviewed", "--changeset", filepath.Join(t.TempDir(), "cs")}
	var asked []string
	cs, eof = mcpClientWith(t, ws, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "accept"}, nil
	}}, review...)
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/review/ok.txt", "content": "yes\n"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, toolText(res))
	require.Len(t, asked, 1)
	assert.Contains(t, asked[0], "The agent asks to write /review/ok.txt (4 bytes)")
	require.NoError(t, eof())
	assert.True(t, fileExists(filepath.Join(dir, "review", "ok.txt")))
	cs, eof = mcpClient(t, ws, review...)
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "/review/no.txt", "content": "no\n"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, toolText(res), "the MCP client cannot ask its user: it does not declare the elicitation capability")
	require.NoError(t, eof())
	assert.False(t, fileExists(filepath.Join(dir, "review", "no.txt")))
}
