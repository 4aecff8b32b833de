package corral_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// Sandbox.Protected names the protected entries of every writable root, as
// the guard protects them: listed names at any depth or at the top,
// Config.Protect's, a HEAD, less AllowPlanting's; read-only and outside
// paths are not its business.
func TestSandboxProtected(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, extra, ro := filepath.Join(base, "ws"), filepath.Join(base, "extra"), filepath.Join(base, "ro")
	for _, d := range []string{ws, extra, ro} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	cfg := corral.Config{Workspace: ws, WritablePaths: []string{extra}, ReadOnlyPaths: []string{ro},
		AllowPlanting: []string{".envrc"}, Protect: []string{"tools/hooks"}}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()
	for _, tc := range []struct {
		path, entry string
	}{
		{filepath.Join(ws, ".git", "config"), filepath.Join(ws, ".git")},
		{filepath.Join(ws, "a", "b", ".git", "hooks", "pre-commit"), filepath.Join(ws, "a", "b", ".git")},
		{filepath.Join(ws, ".mcp.json"), filepath.Join(ws, ".mcp.json")},
		{filepath.Join(extra, ".vscode", "tasks.json"), filepath.Join(extra, ".vscode")},
		{filepath.Join(ws, ".bashrc"), filepath.Join(ws, ".bashrc")},
		{filepath.Join(ws, "tools", "hooks", "x"), filepath.Join(ws, "tools", "hooks")},
		{filepath.Join(ws, "repo", "HEAD"), filepath.Join(ws, "repo", "HEAD")},
		{filepath.Join(ws, "sub", ".bashrc"), ""}, // start-up files: at the top only
		{filepath.Join(ws, ".envrc"), ""},         // AllowPlanting
		{filepath.Join(ws, "notes", "config"), ""},
		{filepath.Join(base, "elsewhere", ".git", "config"), ""},
	} {
		entry, what, ok := sb.Protected(tc.path)
		assert.Equal(t, tc.entry != "", ok, tc.path)
		assert.Equal(t, tc.entry, entry, tc.path)
		if ok {
			assert.NotEmpty(t, what, tc.path)
		}
	}
}
