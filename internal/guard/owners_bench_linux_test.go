package guard

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// BenchmarkCopyUnmapped looks through the git directory of a repository
// made by git init, as Start does before each command: nothing to copy.
func BenchmarkCopyUnmapped(b *testing.B) {
	dir := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		b.Skipf("git init: %v: %s", err, out)
	}
	require.NoError(b, os.WriteFile(filepath.Join(dir, ".git", "index"), make([]byte, 1000), 0o644))
	host, err := unix.Open(filepath.Join(dir, ".git"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(b, err)
	defer unix.Close(host)
	up, err := unix.Open(b.TempDir(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(b, err)
	defer unix.Close(up)
	for b.Loop() {
		require.Empty(b, copyUnmapped(host, up))
	}
}
