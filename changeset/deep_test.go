package changeset

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// deepDepth nests directories of 3-character names far past PATH_MAX (4096
// bytes): 3000 of them make a path of 12,000 bytes.
const deepDepth = 3000

// makeChain makes depth nested directories named abc under root, and a file
// f at the bottom, one name at a time relative to the directory above, as a
// command can.
func makeChain(t testing.TB, root string, depth int, content string) {
	t.Helper()
	fd, err := unix.Open(root, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	for range depth {
		require.NoError(t, unix.Mkdirat(fd, "abc", 0o755))
		next, err := unix.Openat(fd, "abc", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		require.NoError(t, err)
		unix.Close(fd)
		fd = next
	}
	defer unix.Close(fd)
	f, err := unix.Openat(fd, "f", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	require.NoError(t, err)
	_, err = unix.Write(f, []byte(content))
	require.NoError(t, err)
	unix.Close(f)
}

// readChain returns the content of the file at the bottom of a chain, or
// an error if the chain is not there.
func readChain(root string, depth int) (string, error) {
	fd, err := unix.Open(root, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	for range depth {
		next, err := unix.Openat(fd, "abc", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return "", err
		}
		fd = next
	}
	defer unix.Close(fd)
	f, err := unix.Openat(fd, "f", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(f)
	buf := make([]byte, 100)
	n, err := unix.Read(f, buf)
	return string(buf[:max(n, 0)]), err
}

func chainPath(depth int) string {
	return strings.TrimSuffix(strings.Repeat("abc/", depth), "/") + "/f"
}

// TestDeepTree: a chain of directories deeper than PATH_MAX in the upper
// directory can be listed, diffed, exported, imported, applied and
// discarded. The control shows that a path of that length is refused by
// the kernel as such.
func TestDeepTree(t *testing.T) {
	f := newFixture(t, tree{"a.txt": "hello\n"})
	makeChain(t, f.upper, deepDepth, "deep\n")
	long := filepath.Join(f.upper, chainPath(deepDepth))
	_, err := os.Lstat(long)
	require.ErrorIs(t, err, unix.ENAMETOOLONG, "control: the path is too long for a system call")

	changes, err := f.cs.List()
	require.NoError(t, err)
	require.Len(t, changes, deepDepth+1)
	last := changes[len(changes)-1]
	assert.Equal(t, chainPath(deepDepth), last.Path)
	assert.Equal(t, Added, last.Status)
	assert.Equal(t, int64(5), last.Size)

	var diff bytes.Buffer
	require.NoError(t, f.cs.Diff(&diff))
	assert.Contains(t, diff.String(), "+++ b/"+chainPath(deepDepth)+"\n@@ -0,0 +1 @@\n+deep\n")

	var archive bytes.Buffer
	require.NoError(t, f.cs.Export(&archive))
	elsewhere := t.TempDir()
	imported, err := Import(filepath.Join(t.TempDir(), "imported"), elsewhere, &archive, ImportOptions{})
	require.NoError(t, err)
	got, err := imported.List()
	require.NoError(t, err)
	assert.Equal(t, rootless(changes), rootless(got))
	require.NoError(t, imported.Discard())
	_, err = os.Stat(imported.Dir())
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, err = f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	content, err := readChain(f.lower, deepDepth)
	require.NoError(t, err)
	assert.Equal(t, "deep\n", content)
	changes, err = f.cs.List()
	require.NoError(t, err)
	assert.Empty(t, changes)

	// The deep tree is now an original: a new changeset over it records its
	// baseline, and sees its deletion.
	cs, err := Create(filepath.Join(t.TempDir(), "again"), f.lower)
	require.NoError(t, err)
	require.NoError(t, unix.Mknod(filepath.Join(cs.Roots()[0].Upper, "abc"), unix.S_IFCHR, 0))
	changes, err = cs.List()
	require.NoError(t, err)
	assert.Len(t, changes, deepDepth+1)
	_, err = cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	_, err = os.Lstat(filepath.Join(f.lower, "abc"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, cs.Discard())
	require.NoError(t, f.cs.Discard())
}

// TestShortPath: long paths reach the same files as short ones would.
func TestShortPath(t *testing.T) {
	root := t.TempDir()
	makeChain(t, root, deepDepth, "x")
	p := filepath.Join(root, chainPath(deepDepth))
	fi, err := lstat(p)
	require.NoError(t, err)
	assert.Equal(t, int64(1), fi.Size())
	_, err = lstat(p + "-missing")
	var pe *os.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, p+"-missing", pe.Path, "errors name the real path")
	b, err := readFile(p)
	require.NoError(t, err)
	assert.Equal(t, "x", string(b))
}
