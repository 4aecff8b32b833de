package mcpserver

import (
	"context"
	"os"
	"path/filepath"
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
	base string
	dir  map[string]string // host directory of each zone
	sb   *corral.Sandbox
	fs   *zones.FS
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
	z.fs = zones.NewFS(access, nil)
	return z
}

// zoneClient connects a client to a server of z's zones.
func zoneClient(t *testing.T, z *zoneHost) *mcp.ClientSession {
	t.Helper()
	srv, err := New(z.sb, Options{Files: ZoneFiles(z.fs)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
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
