package changeset

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzImport imports any archive next to a workspace and a directory
// that is not its: no panic; a refusal leaves nothing behind; nothing
// outside the new changeset changes; what it holds has no setuid or
// setgid bit, lists, and exports to an archive that imports to the same
// changes.
func FuzzImport(f *testing.F) {
	f.Add(exportedSample(f))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "d", Typeflag: tar.TypeSymlink, Linkname: "/"})
	tw.WriteHeader(&tar.Header{Name: "d/etc/evil", Typeflag: tar.TypeReg})
	tw.WriteHeader(&tar.Header{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o4755})
	tw.Close()
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, archive []byte) {
		base, err := os.MkdirTemp("", "fuzzimport")
		require.NoError(t, err)
		defer removeAll(base)
		ws, other := filepath.Join(base, "ws"), filepath.Join(base, "other")
		writeTree(t, ws, sampleLower)
		writeTree(t, other, tree{"keep": "k\n"})
		before := snapshot(t, base)
		dir := filepath.Join(base, "cs")
		cs, err := Import(dir, ws, bytes.NewReader(archive), ImportOptions{})
		require.Equal(t, before, snapshot(t, base, "cs"), "a file outside the changeset changed")
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			_, serr := os.Lstat(dir)
			require.ErrorIs(t, serr, fs.ErrNotExist, "a refused import left %s: %v", dir, err)
			return
		}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				fi, err := d.Info()
				require.NoError(t, err)
				require.Zero(t, fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid), "%s", p)
			}
			return nil
		})
		changes, err := cs.List()
		if err != nil {
			return // an entry the list cannot read (a directory of mode 0, ...): said, not a panic
		}
		var out bytes.Buffer
		require.NoError(t, cs.Export(&out))
		again, err := Import(filepath.Join(base, "cs2"), ws, &out, ImportOptions{})
		require.NoError(t, err, "a changeset's own export does not import")
		changes2, err := again.List()
		require.NoError(t, err)
		require.Equal(t, summary(rootless(changes)), summary(rootless(changes2)))
	})
}

// exportedSample is an archive Export wrote: a file changed, one made,
// one deleted, a directory replaced, a symlink.
func exportedSample(t testing.TB) []byte {
	fx := newFixture(t, sampleLower)
	fx.write(t, "a.txt", "changed\n")
	fx.write(t, "nd/file", "n\n")
	fx.whiteout(t, "e")
	fx.replaceDir(t, "d")
	fx.write(t, "d/fresh", "f\n")
	fx.write(t, "link", "-> d/fresh")
	var buf bytes.Buffer
	require.NoError(t, fx.cs.Export(&buf))
	return buf.Bytes()
}

// snapshot lists every name under root but those of skip, with its mode
// and, for a file, its content.
func snapshot(t *testing.T, root string, skip ...string) map[string]string {
	m := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		for _, s := range skip {
			if rel == s || strings.HasPrefix(rel, s+"/") {
				return fs.SkipDir
			}
		}
		if err != nil {
			m[rel] = "error " + err.Error()
			return nil
		}
		fi, _ := d.Info()
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		m[rel] = v
		return nil
	})
	return m
}

// removeAll removes root, first making every directory under it
// writable and searchable: an archive may make one of mode 0.
func removeAll(root string) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.Chmod(root, 0o700)
	os.RemoveAll(root)
}
