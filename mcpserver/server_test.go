package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/tools"
)

const testPath = "/usr/local/bin:/usr/bin:/bin"

// host is a workspace with a hidden directory and a directory outside it,
// and a sandbox on the workspace.
type host struct {
	base, ws, secrets, outside, changes string
	sb                                  *corral.Sandbox
}

func newHost(t *testing.T, changeset bool) *host {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	h := &host{
		base: base, ws: filepath.Join(base, "ws"), secrets: filepath.Join(base, "secrets"),
		outside: filepath.Join(base, "outside"),
	}
	for _, d := range []string{h.ws, filepath.Join(h.ws, "sub"), h.secrets, h.outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(h.ws, "hello.txt"), []byte("hello\nworld\nworld\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(h.ws, ".vscode"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(h.ws, ".vscode", "settings.json"), []byte("{}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(h.secrets, "token"), []byte("hidden token\n"), 0o644))
	cfg := corral.Config{
		Workspace: h.ws,
		// The test's directory is under /tmp, which the sandbox replaces:
		// show it, read-only, as the host's other directories are.
		ReadOnlyPaths: []string{base},
		HiddenPaths:   []string{h.secrets},
		Env:           []string{"PATH=" + testPath},
	}
	if changeset {
		h.changes = filepath.Join(base, "changes")
		cfg.Changeset = h.changes
	}
	sandboxtest.Require(t, cfg)
	h.sb, err = corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { h.sb.Close() })
	return h
}

// connect serves srv over an in-memory transport and returns a client
// session on it; both end with the test.
func connect(t *testing.T, srv *Server) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		cancel()
		srv.Close()
	})
	return cs
}

func newServer(t *testing.T, h *host, opts Options) (*Server, *mcp.ClientSession) {
	t.Helper()
	if h.changes != "" {
		opts.Changeset = h.changes
	}
	srv, err := New(h.sb, opts)
	require.NoError(t, err)
	return srv, connect(t, srv)
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return text(res), res.IsError
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func listNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestListTools(t *testing.T) {
	h := newHost(t, false)
	_, cs := newServer(t, h, Options{})
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		assert.NotEmpty(t, tl.Description, tl.Name)
		require.NotNil(t, tl.InputSchema, tl.Name)
	}
	assert.ElementsMatch(t, []string{"shell", "exec", "read_file", "write_file", "edit_file", "list_files"}, names,
		"no changes tool without a changeset")
	// Every property has one plain type: a union with null breaks the
	// official Inspector and some providers' function calling.
	for _, tl := range res.Tools {
		data, err := json.Marshal(tl.InputSchema)
		require.NoError(t, err)
		assert.NotContains(t, string(data), `"null"`, tl.Name)
		if tl.Name == "exec" {
			var sch struct {
				Properties map[string]map[string]any `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(data, &sch))
			assert.Equal(t, "array", sch.Properties["args"]["type"])
		}
	}
	for _, tl := range res.Tools {
		if tl.Name == "shell" {
			assert.Contains(t, tl.Description, "the network is the host's (--net none or --net allow restrict it)", "the defaults said up front")
			assert.Contains(t, tl.Description, "(--scope keeps a home and /tmp)")
		}
	}
	got, isErr := call(t, cs, "exec", map[string]any{"program": "echo", "args": nil})
	assert.False(t, isErr, "a null argument is an absent one: %s", got)
	got, isErr = call(t, cs, "exec", map[string]any{"program": "echo", "args": []string{"a", "b"}})
	assert.False(t, isErr, got)
	assert.Contains(t, got, "a b")
}

func TestPolicyFilters(t *testing.T) {
	h := newHost(t, true)
	for _, tc := range []struct {
		name string
		opts Options
		want []string
	}{
		{"all", Options{}, []string{"shell", "exec", "read_file", "write_file", "edit_file", "list_files", "changes"}},
		{"deny wildcard", Options{Policy: tools.Policy{Deny: []string{"*_file", "exec"}}}, []string{"shell", "list_files", "changes"}},
		{"allow list", Options{Policy: tools.Policy{Allow: []string{"read_file", "shell"}}}, []string{"shell", "read_file"}},
		{"deny wins", Options{Policy: tools.Policy{Allow: []string{"shell"}, Deny: []string{"shell"}}}, nil},
		{"read-only", Options{ReadOnly: true}, []string{"shell", "exec", "read_file", "list_files", "changes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, cs := newServer(t, h, tc.opts)
			assert.Equal(t, tc.want, srv.Tools())
			assert.ElementsMatch(t, tc.want, listNames(t, cs))
		})
	}

	_, cs := newServer(t, h, Options{Policy: tools.Policy{Deny: []string{"write_file"}}})
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "x", "content": "y"}})
	require.Error(t, err, "a tool the policy denies cannot be called")
	assert.NoFileExists(t, filepath.Join(h.ws, "x"))

	_, err = New(h.sb, Options{Policy: tools.Policy{Allow: []string{"bad name"}}})
	assert.ErrorContains(t, err, "tools.allow[0]")
}

func TestShellAndExec(t *testing.T) {
	h := newHost(t, false)
	_, cs := newServer(t, h, Options{})
	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		want    []string
	}{
		{"echo", "shell", map[string]any{"command": "echo hi; echo oops >&2"}, false, []string{"Exit code: 0", "--- stdout ---\nhi", "--- stderr ---\noops"}},
		{"stdin", "shell", map[string]any{"command": "tr a-z A-Z", "stdin": "quiet"}, false, []string{"QUIET"}},
		{"working dir", "shell", map[string]any{"command": "pwd", "working_dir": "sub"}, false, []string{"/ws/sub"}},
		{"exit status", "shell", map[string]any{"command": "exit 3"}, true, []string{"Exit code: 3"}},
		{"timeout", "shell", map[string]any{"command": "sleep 60", "timeout_seconds": 1}, true, []string{"Timed out after 1s"}},
		{"empty command", "shell", map[string]any{"command": " "}, true, []string{"invalid command: empty"}},
		{"dir outside", "shell", map[string]any{"command": "true", "working_dir": "/"}, true, []string{"outside the workspace"}},
		{"missing argument", "shell", map[string]any{}, true, []string{"command"}},
		{"unknown argument", "shell", map[string]any{"command": "true", "cwd": "/"}, true, []string{"cwd"}},
		{"argument's case", "shell", map[string]any{"Command": "true"}, true, []string{"Command"}},
		{"wrong type", "shell", map[string]any{"command": 3}, true, []string{"command"}},
		{"fractional timeout", "shell", map[string]any{"command": "true", "timeout_seconds": 1.5}, true, []string{"timeout_seconds"}},
		{"wrong env type", "exec", map[string]any{"program": "true", "env": map[string]any{"A": 1}}, true, []string{"env"}},
		{"exec", "exec", map[string]any{"program": "printf", "args": []string{"%s-%s", "a b", "c"}}, false, []string{"a b-c"}},
		{"exec env", "exec", map[string]any{"program": "sh", "args": []string{"-c", "echo $GREETING"}, "env": map[string]string{"GREETING": "hey"}}, false, []string{"hey"}},
		{"exec not found", "exec", map[string]any{"program": "no-such-program"}, true, []string{"no-such-program"}},
		{"exec dangerous env", "exec", map[string]any{"program": "true", "env": map[string]string{"LD_PRELOAD": "/x.so"}}, true, []string{"LD_PRELOAD", "refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, isErr := call(t, cs, tc.tool, tc.args)
			assert.Equal(t, tc.isError, isErr, got)
			for _, w := range tc.want {
				assert.Contains(t, got, w)
			}
		})
	}
}

func TestFileTools(t *testing.T) {
	h := newHost(t, false)
	_, cs := newServer(t, h, Options{})
	steps := []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"read", "read_file", map[string]any{"path": "hello.txt"}, false, "hello\nworld\nworld\n"},
		{"read missing", "read_file", map[string]any{"path": "nope.txt"}, true, "does not exist"},
		{"read outside", "read_file", map[string]any{"path": "../outside/x"}, true, "outside the workspace"},
		{"read hidden", "read_file", map[string]any{"path": filepath.Join(h.secrets, "token")}, true, "outside the workspace"},
		{"read dir", "read_file", map[string]any{"path": "sub"}, true, "is a directory"},
		{"write", "write_file", map[string]any{"path": "sub/new/a.txt", "content": "one\ntwo\n"}, false, "Wrote 8 bytes"},
		{"read written", "read_file", map[string]any{"path": "sub/new/a.txt"}, false, "one\ntwo\n"},
		{"write outside", "write_file", map[string]any{"path": "/etc/x", "content": "x"}, true, "outside the workspace"},
		{"edit", "edit_file", map[string]any{"path": "sub/new/a.txt", "old_string": "two", "new_string": "three"}, false, "replaced 1 occurrence"},
		{"read edited", "read_file", map[string]any{"path": "sub/new/a.txt"}, false, "one\nthree\n"},
		{"edit no match", "edit_file", map[string]any{"path": "hello.txt", "old_string": "moon", "new_string": "x"}, true, "old_string was not found"},
		{"edit several", "edit_file", map[string]any{"path": "hello.txt", "old_string": "world", "new_string": "x"}, true, "occurs 2 times"},
		{"edit missing", "edit_file", map[string]any{"path": "nope.txt", "old_string": "a", "new_string": "b"}, true, "does not exist"},
		{"write protected", "write_file", map[string]any{"path": ".vscode/settings.json", "content": "{\"x\": 1}"}, true, "refused: protected"},
		{"edit protected", "edit_file", map[string]any{"path": ".vscode/settings.json", "old_string": "{}", "new_string": "{\"x\": 1}"}, true, "refused: protected"},
		{"write git config", "write_file", map[string]any{"path": ".git/config", "content": "[core]\n\tfsmonitor = touch /tmp/x\n"}, true, "refused: protected: " + h.ws + "/.git is protected (git:"},
		{"write git hook", "write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}, true, "refused: protected"},
		{"write mcp.json", "write_file", map[string]any{"path": ".mcp.json", "content": "{}"}, true, "refused: protected"},
		{"write vscode tasks", "write_file", map[string]any{"path": ".vscode/tasks.json", "content": "{}"}, true, "refused: protected"},
		{"read refused", "read_file", map[string]any{"path": ".mcp.json"}, true, "does not exist"},
		{"list", "list_files", map[string]any{}, false, ".vscode/\nhello.txt (18 bytes)\nsub/\n"},
		{"list sub", "list_files", map[string]any{"path": "sub"}, false, "new/\n"},
		{"list file", "list_files", map[string]any{"path": "hello.txt"}, true, "not a directory"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got, isErr := call(t, cs, st.tool, st.args)
			assert.Equal(t, st.isError, isErr, got)
			assert.Contains(t, got, st.want)
		})
	}
	data, err := os.ReadFile(filepath.Join(h.ws, "hello.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\nworld\nworld\n", string(data), "failed edits change nothing")
	data, err = os.ReadFile(filepath.Join(h.ws, ".vscode", "settings.json"))
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(data), "the protected file is unchanged")
	// Control: the host can write the same file, so the refusal was the
	// sandbox's.
	require.NoError(t, os.WriteFile(filepath.Join(h.ws, ".vscode", "settings.json"), []byte("{\"x\": 1}"), 0o644))
}

// TestChangesFailure: a changeset directory that is not one is an error
// result naming it.
func TestChangesFailure(t *testing.T) {
	h := newHost(t, false)
	bogus := filepath.Join(h.base, "not-a-changeset")
	require.NoError(t, os.WriteFile(bogus, []byte("x"), 0o644))
	_, cs := newServer(t, h, Options{Changeset: bogus})
	got, isErr := call(t, cs, "changes", map[string]any{"diff": true})
	assert.True(t, isErr, got)
	assert.Contains(t, got, "Error: ")
	assert.Contains(t, got, bogus)
}

func TestChanges(t *testing.T) {
	h := newHost(t, true)
	_, cs := newServer(t, h, Options{})
	got, isErr := call(t, cs, "changes", map[string]any{})
	require.False(t, isErr, got)
	assert.Equal(t, "No changes.", got)

	got, isErr = call(t, cs, "write_file", map[string]any{"path": "hello.txt", "content": "changed\n"})
	require.False(t, isErr, got)
	got, isErr = call(t, cs, "shell", map[string]any{"command": "echo new > added.txt"})
	require.False(t, isErr, got)
	data, err := os.ReadFile(filepath.Join(h.ws, "hello.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\nworld\nworld\n", string(data), "the changeset, not the workspace, took the write")
	assert.NoFileExists(t, filepath.Join(h.ws, "added.txt"))

	got, isErr = call(t, cs, "read_file", map[string]any{"path": "hello.txt"})
	require.False(t, isErr, got)
	assert.Equal(t, "changed\n", got, "the file tools see the changeset")

	got, isErr = call(t, cs, "changes", map[string]any{})
	require.False(t, isErr, got)
	assert.Contains(t, got, "A "+filepath.Join(h.ws, "added.txt"))
	assert.Contains(t, got, "M "+filepath.Join(h.ws, "hello.txt"))
	got, isErr = call(t, cs, "changes", map[string]any{"diff": true})
	require.False(t, isErr, got)
	assert.Contains(t, got, "+changed")
	assert.Contains(t, got, "+new")
}

// fakeKey is shaped like an Anthropic key; tests build it at run time so
// the source holds no token a scanner would flag.
func fakeKey() string {
	return "sk-ant-api03-" + strings.Repeat("Zx9Qw3Lk7Vb2", 8) + "Mn4Rt6Yu8Io" + "AA"
}

func TestLeakGuardRefusesArguments(t *testing.T) {
	h := newHost(t, false)
	_, cs := newServer(t, h, Options{})
	key := fakeKey()
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"shell", "shell", map[string]any{"command": "echo " + key + " > leaked.txt"}},
		{"write", "write_file", map[string]any{"path": "leaked.txt", "content": "key=" + key}},
		{"bad type", "shell", map[string]any{"command": "true", "timeout_seconds": key}},
		{"tool name", key, map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, isErr := call(t, cs, tc.tool, tc.args)
			assert.True(t, isErr)
			assert.Contains(t, got, "Refused")
			assert.Contains(t, got, "anthropic")
			assert.NotContains(t, got, key[10:30], "the refusal never echoes the secret")
			assert.NoFileExists(t, filepath.Join(h.ws, "leaked.txt"), "the call did not run")
		})
	}
}

func TestLeakGuardRedactsResults(t *testing.T) {
	h := newHost(t, false)
	key := fakeKey()
	require.NoError(t, os.WriteFile(filepath.Join(h.ws, ".env"), []byte("USER=me\nANTHROPIC_API_KEY="+key+"\nDEBUG=1\n"), 0o644))
	_, cs := newServer(t, h, Options{})
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"read_file", "read_file", map[string]any{"path": ".env"}},
		{"shell", "shell", map[string]any{"command": "cat .env"}},
		{"shell base64", "shell", map[string]any{"command": "base64 .env"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, isErr := call(t, cs, tc.tool, tc.args)
			assert.True(t, isErr, "a result that held a secret is an error")
			assert.NotContains(t, got, key[10:30])
			assert.Contains(t, got, "redacted")
			if tc.name != "shell base64" {
				assert.Contains(t, got, "USER=me", "only the lines with the secret go")
			}
		})
	}
}

func TestCancelKillsTheCommand(t *testing.T) {
	h := newHost(t, false)
	srv, cs := newServer(t, h, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{
			"command": "echo started > started; sleep 3600; echo finished > finished", "timeout_seconds": 1800,
		}})
		done <- err
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(h.ws, "started")); return err == nil },
		time.Minute, 10*time.Millisecond)
	cancel()
	require.Error(t, <-done)
	// Close waits for every call to return, which the shell call does only
	// once its sandbox is gone: it would wait an hour otherwise.
	require.NoError(t, srv.Close())
	assert.NoFileExists(t, filepath.Join(h.ws, "finished"))
}

func TestConcurrentCalls(t *testing.T) {
	h := newHost(t, false)
	_, cs := newServer(t, h, Options{})
	const n = 20
	var wg sync.WaitGroup
	results := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{
				"command": fmt.Sprintf("sleep 0.2; echo call-%d", i),
			}})
			errs[i] = err
			if err == nil {
				results[i] = text(res)
			}
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Contains(t, results[i], fmt.Sprintf("call-%d\n", i))
	}
}

// TestEscapeThroughShell: a shell call that writes outside the workspace
// and reads a hidden file fails inside the sandbox, with the summary of
// what the sandbox refused in a block of its own; the same command run on
// the host succeeds, so the probe would notice an escape.
func TestEscapeThroughShell(t *testing.T) {
	h := newHost(t, false)
	_, cs := newServer(t, h, Options{})
	target := filepath.Join(h.outside, "planted")
	cmd := fmt.Sprintf("echo pwned > %s; cat %s", target, filepath.Join(h.secrets, "token"))

	got, isErr := call(t, cs, "shell", map[string]any{"command": cmd})
	assert.True(t, isErr, got)
	assert.Contains(t, got, "Read-only file system")
	assert.Contains(t, got, "Permission denied")
	assert.NotContains(t, got, "hidden token")
	assert.Regexp(t, `\nThe sandbox refused 1 write \([^)]+\), e\.g\. `+regexp.QuoteMeta(target)+`; --writable \(writable_paths\) without --read-only [^ ]+ allows it`, got, "the summary block")
	assert.Contains(t, got, "ask the user to change the setting named", "the note says what to do instead")
	assert.NoFileExists(t, target)

	out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
	require.NoError(t, err, "control: the same command on the host: %s", out)
	assert.Contains(t, string(out), "hidden token")
	assert.FileExists(t, target)
}

// TestRunEndsWithContext: when Run's context ends during a call, Run
// cancels the call, whose command is killed, and returns; it would wait an
// hour for the command otherwise.
func TestRunEndsWithContext(t *testing.T) {
	h := newHost(t, false)
	srv, err := New(h.sb, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{
		"command": "echo started > started; sleep 3600; echo finished > finished", "timeout_seconds": 1800,
	}})
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(h.ws, "started")); return err == nil },
		time.Minute, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-ran)
	assert.NoFileExists(t, filepath.Join(h.ws, "finished"))
}
