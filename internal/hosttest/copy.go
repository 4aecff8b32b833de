package hosttest

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// CopySelf copies the running test binary into a fresh directory as name
// and returns its path. A test binary that calls corral.Init first in
// TestMain serves as an init helper, or as the CLI where its TestMain
// runs it; the directory is mode 0755, so an unprivileged user can run the
// copy too.
func CopySelf(t testing.TB, name string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	CopyFile(t, self, path)
	return path
}

// CopyFile copies the file from to the new file to, executable (0755).
func CopyFile(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
