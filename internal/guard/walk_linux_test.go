package guard

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestWalkAtExitSeesWhatChanged walks a tree as at a command's start, with
// every directory trusted at once (as if changed long before), changes it
// right away, and walks it again as at exit: each new protected entry is
// found, through directories whose listing was reused and ones re-read.
func TestWalkAtExitSeesWhatChanged(t *testing.T) {
	old := settled
	settled = -time.Hour
	t.Cleanup(func() { settled = old })
	root := t.TempDir()
	for _, d := range []string{"a/b/c", "x/y", "v/.vscode"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	names := Names()
	start := &Session{names: names, dirs: map[string]dirState{}}
	var before []string
	start.walk(root, root, []string{root}, func(p string, _ *unix.Stat_t) { before = append(before, p) })
	assert.Equal(t, []string{filepath.Join(root, "v/.vscode")}, before)
	require.Contains(t, start.dirs, "/a/b", "listings are kept")

	require.NoError(t, os.Mkdir(filepath.Join(root, "a/b/c/.claude"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "x/.mcp.json"), nil, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a/new/.git"), 0o755))

	exit := &Session{names: names, dirs: start.dirs, reuse: true}
	var after []string
	exit.walk(root, root, []string{root}, func(p string, _ *unix.Stat_t) { after = append(after, p) })
	// v is unchanged: its .vscode, there at the start, is not visited again.
	assert.ElementsMatch(t, []string{
		filepath.Join(root, "a/b/c/.claude"),
		filepath.Join(root, "x/.mcp.json"), filepath.Join(root, "a/new/.git"),
	}, after)
}

// TestWalkThroughView walks a root reached through /proc/self/fd/N, as the
// walk at exit reaches a root's clone, and finds what lies below it; a
// subdirectory replaced by a link is not followed.
func TestWalkThroughView(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a/.claude"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(elsewhere, ".vscode"), 0o755))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(root, "link")))
	fd, err := unix.Open(root, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	view := "/proc/self/fd/" + strconv.Itoa(fd)
	s := &Session{names: Names()}
	var found []string
	s.walk(view, view, nil, func(p string, _ *unix.Stat_t) { found = append(found, p) })
	assert.Equal(t, []string{view + "/a/.claude"}, found)
}

// TestWalkAtStartTakesWhatPrepareRead walks a tree as Prepare does, with
// every name protected and every directory trusted at once, changes it,
// and walks it as at a command's start with one name allowed: it finds
// every protected entry, those in directories whose listing it took from
// Prepare's walk as well as those in directories changed since, and looks
// inside the allowed one as inside any directory.
func TestWalkAtStartTakesWhatPrepareRead(t *testing.T) {
	old := settled
	settled = -time.Hour
	t.Cleanup(func() { settled = old })
	root := t.TempDir()
	for _, d := range []string{"a/b/c", "x/y", "v/.vscode", "n/.idea/.claude", "s/.git", "gone/.cursor"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	pre := &Session{names: Names(), dirs: map[string]dirState{}}
	pre.walk(root, root, []string{root}, func(string, *unix.Stat_t) {})

	require.NoError(t, os.WriteFile(filepath.Join(root, "a/b/c/.mcp.json"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "x/.envrc"), nil, 0o644))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "gone")))

	names := slices.DeleteFunc(Names(), func(n string) bool { return n == ".idea" })
	start := &Session{names: names, dirs: map[string]dirState{}, known: pre.dirs}
	var found []string
	start.walk(root, root, []string{root}, func(p string, _ *unix.Stat_t) { found = append(found, p) })
	var want []string
	for _, p := range []string{"v/.vscode", "n/.idea/.claude", "s/.git", "a/b/c/.mcp.json", "x/.envrc"} {
		want = append(want, filepath.Join(root, p))
	}
	assert.ElementsMatch(t, want, found)
	assert.Contains(t, start.dirs, "/v", "listings are kept for the walk at exit")
}
