package guard

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func BenchmarkCopyUnmapped(b *testing.B) {
	dir := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		b.Skip(string(out))
	}
	os.WriteFile(filepath.Join(dir, ".git", "index"), make([]byte, 1000), 0o644)
	host, _ := unix.Open(filepath.Join(dir, ".git"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	up, _ := unix.Open(b.TempDir(), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	for b.Loop() {
		copyUnmapped(host, up)
	}
}
