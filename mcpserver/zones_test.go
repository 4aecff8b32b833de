package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/zones"
)

// zoneHost is a project of three zones: data (read-only), out (writable,
// every change pre-approved) and ask (writable, writes need approval),
// and a sandbox showing them to an agent that declares all three.
type zoneHost struct {
	base   string
	dir    map[string]string // host directory of each zone
	sb     *corral.Sandbox
	fs     *zones.FS
	access *zones.Access
}

func newZoneHost(t *testing.T) *zoneHost {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	z := &zoneHost{base: base, dir: map[string]string{}}
	pre := zones.Approval{Write: zones.PreApproved, Delete: zones.PreApproved}
	project := []zones.Zone{
		{Name: "data", Mode: zones.ReadOnly},
		{Name: "out", Mode: zones.ReadWrite, Approval: pre},
		{Name: "ask", Mode: zones.ReadWrite, Approval: zones.Approval{Write: zones.Ask, Delete: zones.Ask}},
	}
	var decls []zones.Decl
	for i := range project {
		d := filepath.Join(base, "zone-"+project[i].Name)
		require.NoError(t, os.Mkdir(d, 0o755))
		project[i].Path, z.dir[project[i].Name] = d, d
		decls = append(decls, zones.Decl{Name: project[i].Name, Mode: project[i].Mode})
	}
	require.NoError(t, os.WriteFile(filepath.Join(z.dir["data"], "in.txt"), []byte("input\n"), 0o644))
	access, err := zones.Resolve(project, decls)
	require.NoError(t, err)
	ws := filepath.Join(base, "scratch")
	require.NoError(t, os.Mkdir(ws, 0o755))
	cfg, err := access.SandboxConfig(corral.Config{
		Workspace: ws, ReadOnlyPaths: []string{base}, Env: []string{"PATH=" + testPath},
	}, project, filepath.Join(base, "changes"))
	require.NoError(t, err)
	sandboxtest.Require(t, cfg)
	z.sb, err = corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { z.sb.Close() })
	z.fs, z.access = zones.NewFS(access, nil), access
	return z
}

// zoneClient connects a client to a server of z's zones.
func zoneClient(t *testing.T, z *zoneHost) *mcp.ClientSession {
	t.Helper()
	return zoneClientWith(t, z, z.fs, nil, nil)
}

// zoneClientWith connects a client of the options given to a server of
// the zones' FS f.
func zoneClientWith(t *testing.T, z *zoneHost, f *zones.FS, copts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	srv, err := New(z.sb, Options{Files: ZoneFiles(f)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, copts).Connect(ctx, ct, sopts)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Close(); cancel(); srv.Close() })
	return cs
}

func TestZoneFiles(t *testing.T) {
	z := newZoneHost(t)
	cs := zoneClient(t, z)
	for _, st := range []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"list zones", "list_files", map[string]any{}, false, "ask/\ndata/\nout/\n"},
		{"list zone", "list_files", map[string]any{"path": "/data"}, false, "in.txt (6 bytes)"},
		{"list dot", "list_files", map[string]any{"path": "."}, false, "ask/\ndata/\nout/\n"},
		{"list relative", "list_files", map[string]any{"path": "data"}, false, "in.txt (6 bytes)"},
		{"read relative", "read_file", map[string]any{"path": "data/in.txt"}, false, "input"},
		{"read", "read_file", map[string]any{"path": "/data/in.txt"}, false, "input\n"},
		{"read missing", "read_file", map[string]any{"path": "/data/nope"}, true, "no such file or directory"},
		{"read no zone", "read_file", map[string]any{"path": "/etc/passwd"}, true, "no such file or directory"},
		{"write read-only zone", "write_file", map[string]any{"path": "/data/x", "content": "x"}, true, "read-only file system"},
		{"write", "write_file", map[string]any{"path": "/out/sub/new.txt", "content": "one\ntwo\n"}, false, "Wrote 8 bytes"},
		{"edit", "edit_file", map[string]any{"path": "/out/sub/new.txt", "old_string": "two", "new_string": "three"}, false, "replaced 1 occurrence"},
		{"edit no match", "edit_file", map[string]any{"path": "/out/sub/new.txt", "old_string": "moon", "new_string": "x"}, true, "old_string was not found"},
		{"write needing approval", "write_file", map[string]any{"path": "/ask/a.txt", "content": "a"}, true, "the change was not approved"},
		{"shell sees the zones", "shell", map[string]any{"command": "cat /data/in.txt /out/sub/new.txt"}, false, "input\none\nthree\n"},
		{"shell cannot reach a zone's host path", "shell", map[string]any{"command": "cat " + filepath.Join(z.dir["data"], "in.txt")}, true, "Permission denied"},
	} {
		t.Run(st.name, func(t *testing.T) {
			got, isErr := call(t, cs, st.tool, st.args)
			assert.Equal(t, st.isError, isErr, got)
			assert.Contains(t, got, st.want)
		})
	}
	b, err := os.ReadFile(filepath.Join(z.dir["out"], "sub", "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "one\nthree\n", string(b))
	assert.NoFileExists(t, filepath.Join(z.dir["data"], "x"))
	assert.NoFileExists(t, filepath.Join(z.dir["ask"], "a.txt"))
}

// A change an "ask" zone holds for approval is asked of the client's user
// through elicitation: accepted, it is made; declined or dismissed, it is
// refused; a client that cannot ask is refused, told why. Both ways a
// question travels are covered: inside the tool's result (protocol
// 2026-07-28 and later) and as an elicitation/create request (before).
func TestZoneFilesAskTheClient(t *testing.T) {
	z := newZoneHost(t)
	f := zones.NewFS(z.access, ElicitApprover())
	for _, version := range []string{"", "2025-06-18"} {
		for _, st := range []struct {
			name    string
			answer  string // "" for a client without elicitation
			isError bool
			want    string
		}{
			{"accept", "accept", false, "Wrote"},
			{"decline", "decline", true, "write /ask/{file}: permission denied: the change was not approved."},
			{"cancel", "cancel", true, "the change was not approved"},
			{"no elicitation", "", true, "the MCP client cannot ask its user: it does not declare the elicitation capability"},
		} {
			label := version
			if label == "" {
				label = "latest"
			}
			t.Run(label+" "+st.name, func(t *testing.T) {
				file := "new-" + st.name + version + ".txt"
				var asked []string
				copts := &mcp.ClientOptions{}
				if st.answer != "" {
					copts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked = append(asked, req.Params.Message)
						return &mcp.ElicitResult{Action: st.answer}, nil
					}
				}
				cs := zoneClientWith(t, z, f, copts, &mcp.ClientSessionOptions{ProtocolVersion: version})
				got, isErr := call(t, cs, "write_file", map[string]any{"path": "/ask/" + file, "content": "hello\n"})
				assert.Equal(t, st.isError, isErr, got)
				assert.Contains(t, got, strings.ReplaceAll(st.want, "{file}", file))
				assert.NotContains(t, got, "zone")
				if st.isError {
					assert.NoFileExists(t, filepath.Join(z.dir["ask"], file))
				} else {
					b, err := os.ReadFile(filepath.Join(z.dir["ask"], file))
					require.NoError(t, err)
					assert.Equal(t, "hello\n", string(b))
				}
				if st.answer == "" {
					assert.Empty(t, asked)
					return
				}
				require.Len(t, asked, 1, "asked once")
				assert.Contains(t, asked[0], "The agent asks to write /ask/"+file+" (6 bytes). Allow it?")
				assert.Contains(t, asked[0], "+hello")

				// An edit shows the diff of the change.
				old := filepath.Join(z.dir["ask"], "old-"+file)
				require.NoError(t, os.WriteFile(old, []byte("one\n"), 0o644))
				asked = nil
				got, _ = call(t, cs, "edit_file", map[string]any{"path": "/ask/old-" + file, "old_string": "one", "new_string": "two"})
				require.Len(t, asked, 1, got)
				assert.Contains(t, asked[0], "-one\n+two\n")
				want := map[bool]string{true: "one\n", false: "two\n"}[st.isError]
				b, err := os.ReadFile(old)
				require.NoError(t, err)
				assert.Equal(t, want, string(b))
			})
		}
	}

	// Changes that need no approval ask nothing.
	var asked int
	cs := zoneClientWith(t, z, f, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: "accept"}, nil
	}}, nil)
	got, isErr := call(t, cs, "write_file", map[string]any{"path": "/out/free.txt", "content": "x"})
	assert.False(t, isErr, got)
	got, isErr = call(t, cs, "write_file", map[string]any{"path": "/data/x", "content": "x"})
	assert.True(t, isErr, got)
	assert.Contains(t, got, "read-only file system")
	assert.Zero(t, asked)
}

// The answer counts for the change asked about only: a file changed
// between the question and the answer is not written unseen.
func TestZoneFilesAnswerForAnotherChange(t *testing.T) {
	z := newZoneHost(t)
	f := zones.NewFS(z.access, ElicitApprover())
	target := filepath.Join(z.dir["ask"], "race.txt")
	require.NoError(t, os.WriteFile(target, []byte("before\n"), 0o644))
	cs := zoneClientWith(t, z, f, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		// The host changes the file while the user reads the question.
		require.NoError(t, os.WriteFile(target, []byte("changed meanwhile\n"), 0o644))
		return &mcp.ElicitResult{Action: "accept"}, nil
	}}, nil)
	got, isErr := call(t, cs, "write_file", map[string]any{"path": "/ask/race.txt", "content": "agent\n"})
	assert.True(t, isErr, got)
	assert.Contains(t, got, "the change is not the one the user was asked about")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "changed meanwhile\n", string(b))
}

// TestZoneFilesRefuseProtectedEntries: write_file and edit_file over an
// agent's zones, which write from the server's process, refuse a
// protected entry (git's config and hooks, an agent's MCP servers, an
// editor's tasks, a HEAD), by the path as given or through a symlink, with
// the rule named; nothing lands. An ordinary file beside them, the
// control, is written.
func TestZoneFilesRefuseProtectedEntries(t *testing.T) {
	z := newZoneHost(t)
	out := z.dir["out"]
	require.NoError(t, os.MkdirAll(filepath.Join(out, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, ".git", "config"), []byte("[core]\n"), 0o644))
	require.NoError(t, os.Symlink(".git", filepath.Join(out, "link")))
	cs := zoneClient(t, z)
	for _, p := range []string{"/out/.git/config", "/out/.git/hooks/pre-commit", "/out/.mcp.json", "/out/.vscode/tasks.json", "/out/link/config", "/out/sub/HEAD"} {
		got, isErr := call(t, cs, "write_file", map[string]any{"path": p, "content": "[core]\n\tfsmonitor = touch /tmp/pwned\n"})
		assert.True(t, isErr, p)
		assert.Contains(t, got, "refused: protected", p)
	}
	got, isErr := call(t, cs, "edit_file", map[string]any{"path": "/out/.git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = x"})
	assert.True(t, isErr)
	assert.Contains(t, got, "refused: protected")
	data, err := os.ReadFile(filepath.Join(out, ".git", "config"))
	require.NoError(t, err)
	assert.Equal(t, "[core]\n", string(data))
	for _, p := range []string{".git/hooks/pre-commit", ".mcp.json", "sub/HEAD"} {
		assert.NoFileExists(t, filepath.Join(out, p))
	}
	assert.NoDirExists(t, filepath.Join(out, ".vscode"))
	got, isErr = call(t, cs, "write_file", map[string]any{"path": "/out/notes/config", "content": "plain\n"})
	assert.False(t, isErr, "control: %s", got)
	assert.FileExists(t, filepath.Join(out, "notes", "config"))
}
