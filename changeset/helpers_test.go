package changeset

import (
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A tree describes files for tests: "name": "content" is a file, "name/" a
// directory, "name": "-> target" a symlink.
type tree map[string]string

const linkPrefix = "-> "

func writeTree(t testing.TB, root string, tr tree) {
	t.Helper()
	names := make([]string, 0, len(tr))
	for n := range tr {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		writeEntry(t, root, n, tr[n])
	}
}

func writeEntry(t testing.TB, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(name, "/")))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	switch {
	case strings.HasSuffix(name, "/"):
		require.NoError(t, os.MkdirAll(p, 0o755))
	case strings.HasPrefix(content, linkPrefix):
		require.NoError(t, os.Symlink(strings.TrimPrefix(content, linkPrefix), p))
	default:
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// readTree is the inverse of writeTree.
func readTree(t testing.TB, root string) tree {
	t.Helper()
	tr := tree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if p == root {
			return nil
		}
		rel := relPath(root, p)
		switch {
		case d.IsDir():
			tr[rel+"/"] = ""
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			require.NoError(t, err)
			tr[rel] = linkPrefix + target
		default:
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			tr[rel] = string(b)
		}
		return nil
	})
	require.NoError(t, err)
	return tr
}

// fixture is a changeset over a lower tree whose upper directory a test
// fills by hand, as overlayfs would.
type fixture struct {
	cs    *Changeset
	lower string
	upper string
}

func newFixture(t testing.TB, lower tree) *fixture {
	t.Helper()
	base := t.TempDir()
	l := filepath.Join(base, "lower")
	require.NoError(t, os.Mkdir(l, 0o755))
	writeTree(t, l, lower)
	cs, err := Create(filepath.Join(base, "cs"), l)
	require.NoError(t, err)
	r := cs.Roots()[0]
	return &fixture{cs: cs, lower: r.Path, upper: r.Upper}
}

// copyUp makes the upper directories above name, with the originals'
// permissions, as overlayfs does before it writes beneath them.
func (f *fixture) copyUp(t testing.TB, name string) {
	t.Helper()
	dir := path.Dir(name)
	if dir == "." {
		return
	}
	f.copyUp(t, dir)
	up := filepath.Join(f.upper, filepath.FromSlash(dir))
	if _, err := os.Lstat(up); err == nil {
		return
	}
	mode := fs.FileMode(0o755)
	if fi, err := os.Lstat(filepath.Join(f.lower, filepath.FromSlash(dir))); err == nil {
		mode = fi.Mode().Perm()
	}
	require.NoError(t, os.Mkdir(up, 0o700))
	require.NoError(t, os.Chmod(up, mode))
}

// write puts a file, directory or symlink (see tree) into the upper
// directory, replacing what is there.
func (f *fixture) write(t testing.TB, name, content string) {
	t.Helper()
	f.copyUp(t, strings.TrimSuffix(name, "/"))
	require.NoError(t, os.RemoveAll(filepath.Join(f.upper, filepath.FromSlash(strings.TrimSuffix(name, "/")))))
	writeEntry(t, f.upper, name, content)
}

// whiteout deletes name as overlayfs does.
func (f *fixture) whiteout(t testing.TB, name string) {
	t.Helper()
	f.copyUp(t, name)
	p := filepath.Join(f.upper, filepath.FromSlash(name))
	require.NoError(t, os.RemoveAll(p))
	require.NoError(t, unix.Mknod(p, unix.S_IFCHR, 0))
}

// replaceDir removes the directory name and makes an empty one in its place
// (rm -rf name; mkdir name), as overlayfs does: an opaque directory.
func (f *fixture) replaceDir(t testing.TB, name string) {
	t.Helper()
	f.write(t, name+"/", "")
	require.NoError(t, unix.Lsetxattr(filepath.Join(f.upper, filepath.FromSlash(name)), "user.overlay.opaque", []byte("y"), 0))
}

func (f *fixture) chmod(t testing.TB, name string, mode fs.FileMode) {
	t.Helper()
	require.NoError(t, os.Chmod(filepath.Join(f.upper, filepath.FromSlash(name)), mode))
}

// summary renders changes as "A path" lines for comparison.
func summary(changes []Change) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.String()
	}
	return out
}

// rootless returns changes with Root cleared, to compare the changes of
// two changesets over copies of one tree.
func rootless(changes []Change) []Change {
	out := slices.Clone(changes)
	for i := range out {
		out[i].Root = ""
	}
	return out
}

func quoteJSON(t testing.TB, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

func setXattr(p, name, value string) error { return unix.Lsetxattr(p, name, []byte(value), 0) }

func mkfifo(p string) error { return unix.Mkfifo(p, 0o644) }

// afterTick returns once the clock that stamps files has moved past the
// change time of path, so that a change made next gets a later timestamp
// than anything recorded before. The kernel stamps files from a coarse
// clock, a few milliseconds a tick, and nothing signals a tick: it creates
// a probe file until the probe's stamp is later.
func afterTick(t *testing.T, path string) {
	t.Helper()
	var ref unix.Stat_t
	require.NoError(t, unix.Lstat(path, &ref))
	probe := filepath.Join(t.TempDir(), "tick")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		os.Remove(probe)
		require.NoError(t, os.WriteFile(probe, nil, 0o644))
		var st unix.Stat_t
		require.NoError(t, unix.Lstat(probe, &st))
		if st.Ctim.Nano() > ref.Ctim.Nano() {
			return
		}
	}
	t.Fatalf("the file clock did not move past the change time of %s", path)
}

// AfterTick is afterTick for the package's external tests.
var AfterTick = afterTick
