package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// BenchmarkStartWalk is the walk when a command starts, reading every
// directory (no listing taken from Prepare), on the tree of
// BenchmarkGitCommit: 100 directories of 100 files beside a .git.
func BenchmarkStartWalk(b *testing.B) {
	root := b.TempDir()
	for i := range 100 {
		d := filepath.Join(root, fmt.Sprintf("d%d", i))
		require.NoError(b, os.Mkdir(d, 0o755))
		for j := range 100 {
			require.NoError(b, os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d", j)), nil, 0o644))
		}
	}
	require.NoError(b, os.MkdirAll(filepath.Join(root, ".git/objects"), 0o755))
	names := Names()
	for b.Loop() {
		s := &Session{names: names, dirs: map[string]dirState{}, seen: map[identity]bool{}}
		s.bare = func(string, *unix.Stat_t) {}
		s.walk(root, root, []string{root}, func(string, *unix.Stat_t) {})
	}
}
