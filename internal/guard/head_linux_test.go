package guard

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestHeadOf(t *testing.T) {
	cases := []struct {
		name string
		make func(dir string) error
		want headState
	}{
		{"none", func(string) error { return nil }, noHead},
		{"symbolic ref", writeHead("ref: refs/heads/main\n"), repoHead},
		{"object name", writeHead("0123456789abcdef0123456789abcdef01234567\n"), repoHead},
		{"empty (a staged placeholder)", writeHead(""), inertHead},
		{"notes", writeHead("notes\n"), inertHead},
		{"ref outside refs/", writeHead("ref: heads/main\n"), inertHead},
		{"symlink into refs/", func(d string) error { return os.Symlink("refs/heads/main", filepath.Join(d, "HEAD")) }, repoHead},
		{"symlink elsewhere", func(d string) error { return os.Symlink("notes", filepath.Join(d, "HEAD")) }, noHead},
		{"directory", func(d string) error { return os.Mkdir(filepath.Join(d, "HEAD"), 0o755) }, noHead},
		{"socket node (a staged file's placeholder)", func(d string) error {
			return unix.Mknod(filepath.Join(d, "HEAD"), unix.S_IFSOCK|0o644, 0)
		}, noHead},
		{"hard link", func(d string) error {
			if err := writeHead("notes\n")(d); err != nil {
				return err
			}
			return os.Link(filepath.Join(d, "HEAD"), filepath.Join(d, "other"))
		}, repoHead},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, c.make(dir))
			assert.Equal(t, c.want, headOf(dir))
		})
	}
}

func writeHead(content string) func(string) error {
	return func(dir string) error { return os.WriteFile(filepath.Join(dir, "HEAD"), []byte(content), 0o644) }
}

// The walk at the start stages every directory whose HEAD git takes (not
// only one with objects and refs, and not the root itself) and hands a
// HEAD git does not take to inert, for a read-only bind; with .git
// allowed, neither.
func TestWalkFindsHeads(t *testing.T) {
	root := t.TempDir()
	for dir, head := range map[string]string{"bare.git": "ref: refs/heads/main\n", "half": "ref: refs/heads/main\n", "notes": "notes\n", "a/deep": "notes\n"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
		require.NoError(t, writeHead(head)(filepath.Join(root, dir)))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bare.git/objects"), 0o755))
	require.NoError(t, writeHead("ref: refs/heads/main\n")(root))
	for _, names := range [][]string{Names(), {".vscode"}} {
		s := &Session{names: names, dirs: map[string]dirState{}}
		var bare, inert []string
		s.bare = func(p string, _ *unix.Stat_t) { bare = append(bare, p) }
		s.inert = func(p string) { inert = append(inert, p) }
		s.walk(root, root, []string{root}, func(string, *unix.Stat_t) {})
		if len(names) == 1 {
			assert.Empty(t, bare, ".git allowed")
			assert.Empty(t, inert, ".git allowed")
			continue
		}
		assert.ElementsMatch(t, []string{filepath.Join(root, "bare.git"), filepath.Join(root, "half")}, bare)
		assert.ElementsMatch(t, []string{filepath.Join(root, "notes/HEAD"), filepath.Join(root, "a/deep/HEAD")}, inert)
	}
}

// A HEAD in staged content (a git directory's overlay, a new protected
// directory's tmpfs) is not staged again; elsewhere in a writable root it
// is, and outside the roots or with .git allowed it is not.
func TestStagesHead(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	s := &Session{roots: []root{{path: dir}}, names: Names()}
	assert.True(t, s.StagesHead(fd, dir))
	assert.True(t, s.StagesHead(fd, ""), "a directory too deep to name: fail closed")
	assert.False(t, s.StagesHead(fd, "/elsewhere"))
	s.stagedDev(fd)
	assert.False(t, s.StagesHead(fd, dir), "in staged content")
	allowed := &Session{roots: []root{{path: dir}}, names: []string{".vscode"}}
	assert.False(t, allowed.StagesHead(fd, dir))
}
