package guard

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Follows finds a protected symlink's target that does not exist yet,
// the hooks directory of a nested worktree on the way, and a name listed
// for the top of a root relative to the home a writable root lies in; a
// plain path beside them is not protected.
func TestFollows(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	for _, d := range []string{"ws/.claude", "ws/sub/lib/.git", "home/.config/git"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	require.NoError(t, os.Symlink("../shared/claude.json", filepath.Join(ws, ".claude/settings.json")))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "sub/lib/.git/config"), []byte("[core]\n\thooksPath = hooks\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub/lib/hooks"), 0o755))
	roots, homes := []string{ws, filepath.Join(home, ".config")}, []string{home}
	for p, want := range map[string]string{
		filepath.Join(ws, "shared/claude.json"):       filepath.Join(ws, "shared/claude.json"),
		filepath.Join(ws, "sub/lib/hooks/pre-commit"): filepath.Join(ws, "sub/lib/hooks"),
		filepath.Join(home, ".config/git/config"):     filepath.Join(home, ".config/git"),
	} {
		entry, why, ok := Follows(p, roots, homes, Names())
		assert.True(t, ok, p)
		assert.Equal(t, want, entry, p)
		assert.NotEmpty(t, why, p)
	}
	for _, p := range []string{filepath.Join(ws, "shared/other"), filepath.Join(ws, "sub/lib/src.go"), filepath.Join(home, ".config/fish2/x")} {
		_, _, ok := Follows(p, roots, homes, Names())
		assert.False(t, ok, p)
	}
}
