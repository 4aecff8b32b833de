package zones

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FS refuses to write or make a protected entry in a zone, by the path as
// given, through a symlink, and when a directory on the way is swapped for
// a symlink into .git between the check and the write; nothing lands. An
// ordinary file beside them, the control, is written.
func TestFSRefusesProtectedEntries(t *testing.T) {
	zs, _ := fsFixture(t)
	a, err := Resolve(zs, []Decl{{Name: "drafts", Mode: ReadWrite}})
	require.NoError(t, err)
	f := NewFS(a, ApproverFunc(func(context.Context, Request) (bool, error) { return true, nil }))
	ctx := context.Background()
	dir, _ := a.Zone("drafts")
	require.NoError(t, os.MkdirAll(filepath.Join(dir.Path, ".git", "hooks"), 0o755))
	gitConfig := filepath.Join(dir.Path, ".git", "config")
	require.NoError(t, os.WriteFile(gitConfig, []byte("[core]\n"), 0o644))
	require.NoError(t, os.Symlink(".git", filepath.Join(dir.Path, "link")))
	require.NoError(t, os.Mkdir(filepath.Join(dir.Path, "sub"), 0o755))

	for _, p := range []string{"/drafts/.git/config", "/drafts/.git/hooks/pre-commit", "/drafts/.mcp.json", "/drafts/link/config", "/drafts/x/HEAD"} {
		assert.ErrorIs(t, f.Write(ctx, p, []byte("[core]\n\tfsmonitor = x\n")), ErrProtected, p)
	}
	assert.ErrorIs(t, f.Mkdir(ctx, "/drafts/.vscode"), ErrProtected)

	testHookBeforeWrite = func() {
		require.NoError(t, os.Rename(filepath.Join(dir.Path, "sub"), filepath.Join(dir.Path, "sub.old")))
		require.NoError(t, os.Symlink(".git", filepath.Join(dir.Path, "sub")))
	}
	t.Cleanup(func() { testHookBeforeWrite = nil })
	assert.Error(t, f.Write(ctx, "/drafts/sub/config", []byte("[core]\n\tfsmonitor = x\n")))
	testHookBeforeWrite = nil

	data, err := os.ReadFile(gitConfig)
	require.NoError(t, err)
	assert.Equal(t, "[core]\n", string(data))
	for _, p := range []string{".git/hooks/pre-commit", ".mcp.json", "x/HEAD"} {
		assert.NoFileExists(t, filepath.Join(dir.Path, p))
	}
	assert.NoDirExists(t, filepath.Join(dir.Path, ".vscode"))
	require.NoError(t, f.Write(ctx, "/drafts/notes/config", []byte("plain\n")), "control")
	assert.FileExists(t, filepath.Join(dir.Path, "notes", "config"))
}

// What the host's programs follow out of a protected entry of a zone, or
// git runs from it, is protected as the entry: the directory hooksPath
// names and a protected symlink's target. The control, a name beside them,
// is written.
func TestFSRefusesWhatTheHostFollows(t *testing.T) {
	zs, _ := fsFixture(t)
	a, err := Resolve(zs, []Decl{{Name: "drafts", Mode: ReadWrite}})
	require.NoError(t, err)
	f := NewFS(a, ApproverFunc(func(context.Context, Request) (bool, error) { return true, nil }))
	ctx := context.Background()
	dir, _ := a.Zone("drafts")
	for _, d := range []string{".git", "tools/hooks", "tools/vscode"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir.Path, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir.Path, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir.Path, ".git", "config"), []byte("[core]\n\thooksPath = tools/hooks\n"), 0o644))
	require.NoError(t, os.Symlink("tools/vscode", filepath.Join(dir.Path, ".vscode")))
	for _, p := range []string{"/drafts/tools/hooks/pre-commit", "/drafts/tools/vscode/tasks.json"} {
		assert.ErrorIs(t, f.Write(ctx, p, []byte("evil\n")), ErrProtected, p)
	}
	assert.NoFileExists(t, filepath.Join(dir.Path, "tools/hooks/pre-commit"))
	require.NoError(t, f.Write(ctx, "/drafts/tools/notes", []byte("plain\n")), "control")
}
