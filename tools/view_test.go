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
