package changeset

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name  string
		apply func(t *testing.T, f *fixture)
		want  string
	}{
		{"modified text", func(t *testing.T, f *fixture) {
			f.write(t, "a.txt", "hello\nworld\n")
		}, `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1 +1,2 @@
 hello
+world
`},
		{"added", func(t *testing.T, f *fixture) {
			f.write(t, "d/new", "one\ntwo")
		}, `diff --git a/d/new b/d/new
new file mode 100644
--- /dev/null
+++ b/d/new
@@ -0,0 +1,2 @@
+one
+two
\ No newline at end of file
`},
		{"added empty", func(t *testing.T, f *fixture) {
			f.write(t, "empty", "")
		}, "diff --git a/empty b/empty\nnew file mode 100644\n"},
		{"deleted", func(t *testing.T, f *fixture) {
			f.whiteout(t, "d/y")
		}, `diff --git a/d/y b/d/y
deleted file mode 100644
--- a/d/y
+++ /dev/null
@@ -1 +0,0 @@
-old
`},
		{"binary", func(t *testing.T, f *fixture) {
			f.write(t, "bin", "bin\x00arY")
			f.write(t, "newbin", "\x00\x01")
		}, `diff --git a/bin b/bin
Binary files a/bin and b/bin differ
diff --git a/newbin b/newbin
new file mode 100644
Binary files /dev/null and b/newbin differ
`},
		{"mode only", func(t *testing.T, f *fixture) {
			f.write(t, "a.txt", "hello\n")
			f.chmod(t, "a.txt", 0o755)
		}, "diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n"},
		{"symlink", func(t *testing.T, f *fixture) {
			f.write(t, "link", "-> d/x")
		}, `diff --git a/link b/link
--- a/link
+++ b/link
@@ -1 +1 @@
-a.txt
\ No newline at end of file
+d/x
\ No newline at end of file
`},
		{"type change is a deletion and an addition", func(t *testing.T, f *fixture) {
			f.write(t, "a.txt", "-> d/x")
		}, `diff --git a/a.txt b/a.txt
deleted file mode 100644
--- a/a.txt
+++ /dev/null
@@ -1 +0,0 @@
-hello
diff --git a/a.txt b/a.txt
new file mode 120000
--- /dev/null
+++ b/a.txt
@@ -0,0 +1 @@
+d/x
\ No newline at end of file
`},
		{"directories have no diff", func(t *testing.T, f *fixture) {
			f.write(t, "nd/", "")
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sampleLower)
			tt.apply(t, f)
			var out bytes.Buffer
			require.NoError(t, f.cs.Diff(&out))
			assert.Equal(t, tt.want, out.String())
		})
	}
}

// TestDiffApplies checks the diff against a second implementation: git
// apply turns a copy of the originals into the merged tree.
func TestDiffApplies(t *testing.T) {
	git, err := exec.LookPath("git")
	require.NoError(t, err, "this test checks diffs with git apply")
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", strings.Repeat("line\n", 20)+"hello\n")
	f.write(t, "d/x", "keep\nmore\nlines")
	f.whiteout(t, "d/y")
	f.write(t, "e/deep/new", "new\n")
	f.write(t, "link", "-> d/x")
	f.write(t, "file-to-dir/", "")
	f.write(t, "file-to-dir/c", "c\n")
	var patch bytes.Buffer
	require.NoError(t, f.cs.Diff(&patch))

	work := t.TempDir()
	writeTree(t, work, sampleLower)
	cmd := exec.Command(git, "apply", "--unsafe-paths", "-")
	cmd.Dir, cmd.Stdin = work, &patch
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))

	want := merged(t, f)
	delete(want, "bin") // binary content is not in the diff
	got := readTree(t, work)
	delete(got, "bin")
	assert.Equal(t, want, got)
}

// merged is the tree a sandbox saw: the originals with the upper directory
// on top, computed the simple way from List.
func merged(t *testing.T, f *fixture) tree {
	t.Helper()
	work := t.TempDir()
	writeTree(t, work, readTree(t, f.lower))
	all, err := f.cs.List()
	require.NoError(t, err)
	changes := changesOf(all, f.lower)
	for _, ch := range slices.Backward(changes) {
		if ch.Status == Deleted {
			require.NoError(t, os.RemoveAll(filepath.Join(work, filepath.FromSlash(ch.Path))))
		}
	}
	for _, ch := range changes {
		p := filepath.Join(work, filepath.FromSlash(ch.Path))
		switch {
		case ch.Status == Deleted:
		case ch.Type == Dir:
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				continue
			}
			require.NoError(t, os.RemoveAll(p))
			require.NoError(t, os.Mkdir(p, 0o755))
		default:
			require.NoError(t, os.RemoveAll(p))
			src := filepath.Join(f.upper, filepath.FromSlash(ch.Path))
			if ch.Type == Symlink {
				require.NoError(t, os.Symlink(ch.Target, p))
				continue
			}
			b, err := os.ReadFile(src)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b, fs.FileMode(ch.Mode)))
		}
	}
	return readTree(t, work)
}
