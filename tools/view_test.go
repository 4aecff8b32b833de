package tools

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// A File shown at /workspace takes the model's /workspace paths as the
// workspace's, and names paths in errors as the model sees them.
func TestFileAtView(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f, err := NewFileAt(ws, "/workspace")
	require.NoError(t, err)
	require.NoError(t, f.Write("/workspace/a/b.txt", "hello"))
	got, err := os.ReadFile(filepath.Join(ws, "a/b.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
	s, err := f.Read("/workspace/a/b.txt")
	require.NoError(t, err)
	assert.Equal(t, "hello", s)
	s, err = f.Read("a/b.txt")
	require.NoError(t, err, "relative paths stay relative to the workspace")
	assert.Equal(t, "hello", s)

	_, err = f.Read("/workspace/../etc/passwd")
	require.ErrorIs(t, err, ErrOutsideWorkspace)
	_, err = f.Read("/workspacex/f")
	require.ErrorIs(t, err, ErrOutsideWorkspace)
	var pe *PathError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, "/workspace", pe.Workspace, "errors name the workspace as the model sees it")

	_, err = NewFileAt(ws, "relative")
	require.Error(t, err)
}

// Control: without a view, /workspace is outside the workspace.
func TestFileWithoutViewRefusesTheDestination(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f, err := NewFile(ws)
	require.NoError(t, err)
	require.ErrorIs(t, f.Write("/workspace/a.txt", "x"), ErrOutsideWorkspace)
}

// Shell in a sandbox whose workspace is shown at /workspace: working
// directories are given and run there.
func TestShellAtWorkspaceDest(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	cfg := corral.Config{Workspace: ws, WorkspaceDest: "/workspace", Env: []string{"PATH=" + testPath}}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()
	sh, err := NewShell(sb, Options{})
	require.NoError(t, err)
	for dir, want := range map[string]string{"": "/workspace\n", "sub": "/workspace/sub\n", "/workspace/sub": "/workspace/sub\n"} {
		out, err := sh.Run(t.Context(), ShellArgs{Command: "pwd", WorkingDir: dir})
		require.NoError(t, err)
		assert.Equal(t, want, out.Stdout, "working_dir %q", dir)
	}
	_, err = sh.Run(t.Context(), ShellArgs{Command: "pwd", WorkingDir: "/etc"})
	require.ErrorIs(t, err, ErrOutsideWorkspace)
}

// destSandbox is a sandbox whose workspace is shown at /workspace, an
// agent's workspace read-only at /agent and a shared directory writable at
// /shared, each holding one file.
func destSandbox(t *testing.T) (ws, agent, shared string, sb *corral.Sandbox) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, agent, shared = filepath.Join(base, "ws"), filepath.Join(base, "agent"), filepath.Join(base, "shared")
	for d, f := range map[string]string{ws: "own.txt", agent: "TODO.md", shared: "s.txt"} {
		require.NoError(t, os.Mkdir(d, 0o755))
		writeFile(t, filepath.Join(d, f), filepath.Base(d)+" "+f+"\n", 0o644)
	}
	cfg := corral.Config{Workspace: ws, WorkspaceDest: "/workspace", Env: []string{"PATH=" + testPath},
		Binds: []corral.Bind{{Source: agent, Dest: "/agent", ReadOnly: true}, {Source: shared, Dest: "/shared"}}}
	sandboxtest.Require(t, cfg)
	sb, err = corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	return ws, agent, shared, sb
}

// sandboxCat is what a command in sb reads at p, or "" when it cannot.
func sandboxCat(t *testing.T, sb *corral.Sandbox, p string) string {
	out, err := sb.Command(t.Context(), "cat", p).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// The file tools take a path as the sandbox's commands see it: in every
// destination, not only the workspace's, the same file; writes where the
// sandbox refuses them are refused.
func TestFileToolsAtDestinations(t *testing.T) {
	ws, agent, shared, sb := destSandbox(t)
	f, err := NewFileFor(sb)
	require.NoError(t, err)
	sf, err := NewSandboxFile(sb)
	require.NoError(t, err)
	read := map[string]func(string) (string, error){
		"File":        f.Read,
		"SandboxFile": func(p string) (string, error) { return sf.Read(t.Context(), p) },
	}
	write := map[string]func(p, s string) error{
		"File":        f.Write,
		"SandboxFile": func(p, s string) error { return sf.Write(t.Context(), p, s) },
	}
	for name, rd := range read {
		t.Run(name, func(t *testing.T) {
			for _, p := range []string{"/workspace/own.txt", "own.txt", "/agent/TODO.md", "/shared/s.txt", "../agent/TODO.md"} {
				want := sandboxCat(t, sb, filepath.Join("/workspace", p))
				if filepath.IsAbs(p) {
					want = sandboxCat(t, sb, p)
				}
				require.NotEmpty(t, want, "the sandbox reads %s", p)
				got, err := rd(p)
				require.NoError(t, err, p)
				assert.Equal(t, want, got, p)
			}
			wr := write[name]
			require.NoError(t, wr("/workspace/"+name+".txt", "from "+name))
			assert.FileExists(t, filepath.Join(ws, name+".txt"))
			require.NoError(t, wr("/shared/"+name+".txt", "from "+name))
			assert.Equal(t, "from "+name, sandboxCat(t, sb, "/shared/"+name+".txt"))
			assert.FileExists(t, filepath.Join(shared, name+".txt"))
			err := wr("/agent/"+name+".txt", "x")
			require.Error(t, err, "/agent is read-only")
			assert.Contains(t, err.Error(), "ead-only file system")
			assert.NoFileExists(t, filepath.Join(agent, name+".txt"))
			// The agent's workspace at its host path is not what the
			// sandbox shows there.
			_, err = rd(filepath.Join(agent, "TODO.md"))
			assert.ErrorIs(t, err, ErrOutsideWorkspace)
		})
	}
	entries, _, err := f.List("/agent")
	require.NoError(t, err)
	assert.Equal(t, []Entry{{Name: "TODO.md", Type: "file", Size: int64(len("agent TODO.md\n"))}}, entries)
	entries, _, err = sf.List(t.Context(), "/agent")
	require.NoError(t, err)
	assert.Equal(t, []Entry{{Name: "TODO.md", Type: "file", Size: int64(len("agent TODO.md\n"))}}, entries)

	// Control: a File that knows only the workspace's destination refuses
	// /agent, which the sandbox shows.
	only, err := NewFileAt(sb.Workspace(), sb.WorkspaceDir())
	require.NoError(t, err)
	_, err = only.Read("/agent/TODO.md")
	require.ErrorIs(t, err, ErrOutsideWorkspace)
	// And the kernel refuses the sandbox's own write to /agent.
	require.Error(t, sb.Command(t.Context(), "sh", "-c", "echo x > /agent/k").Run())
}

// Working directories may lie in a destination too.
func TestShellInBind(t *testing.T) {
	_, _, _, sb := destSandbox(t)
	sh, err := NewShell(sb, Options{})
	require.NoError(t, err)
	out, err := sh.Run(t.Context(), ShellArgs{Command: "pwd && cat TODO.md", WorkingDir: "/agent"})
	require.NoError(t, err)
	assert.Equal(t, "/agent\nagent TODO.md\n", out.Stdout)
}
