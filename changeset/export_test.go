package changeset

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExport(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", "changed\n")
	f.write(t, "nd/file", "n\n")
	f.whiteout(t, "e")
	f.replaceDir(t, "d")
	f.write(t, "d/fresh", "f\n")
	f.write(t, "dir-to-file", "file\n")
	f.write(t, "link", "-> d/fresh")
	var buf bytes.Buffer
	require.NoError(t, f.cs.Export(&buf))

	got := map[string]string{}
	tr := tar.NewReader(&buf)
	h, err := tr.Next()
	require.NoError(t, err)
	assert.Equal(t, byte(tar.TypeXGlobalHeader), h.Typeflag, "the roots come first")
	assert.JSONEq(t, `[`+quoteJSON(t, f.lower)+`]`, h.PAXRecords[rootsRecord])
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		got[h.Name] = string(h.Typeflag) + " " + string(b) + h.Linkname
	}
	assert.Equal(t, map[string]string{
		"a.txt":          "0 changed\n",
		"d/":             "5 ",
		"d/fresh":        "0 f\n",
		"d/.wh..wh..opq": "0 ",       // hides d/x and d/y
		"dir-to-file":    "0 file\n", // replaces the directory and all in it
		".wh.e":          "0 ",       // covers e/deep and e/deep/z
		"link":           "2 d/fresh",
		"nd/":            "5 ",
		"nd/file":        "0 n\n",
	}, got)
}

// TestExportImport replays a changeset on a copy of the originals: the
// imported changeset lists the same changes and applies to the same tree.
func TestExportImport(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", "changed\n")
	f.chmod(t, "a.txt", 0o600)
	f.write(t, "nd/file", "n\n")
	f.chmod(t, "nd", 0o500)
	f.whiteout(t, "e")
	f.replaceDir(t, "d")
	f.write(t, "d/fresh", "f\n")
	f.write(t, "dir-to-file", "file\n")
	f.write(t, "file-to-dir/", "")
	f.write(t, "file-to-dir/x", "x\n")
	f.write(t, "link", "-> d/fresh")
	f.write(t, "bin", "\x00\xff")
	var buf bytes.Buffer
	require.NoError(t, f.cs.Export(&buf))
	t.Cleanup(func() { os.Chmod(filepath.Join(f.upper, "nd"), 0o755) })

	elsewhere := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.Mkdir(elsewhere, 0o755))
	writeTree(t, elsewhere, sampleLower)
	imported, err := Import(filepath.Join(t.TempDir(), "imported"), elsewhere, &buf, ImportOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { os.Chmod(filepath.Join(imported.Roots()[0].Upper, "nd"), 0o755) })

	want, err := f.cs.List()
	require.NoError(t, err)
	got, err := imported.List()
	require.NoError(t, err)
	assert.Equal(t, rootless(want), rootless(got))

	_, err = f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	_, err = imported.Apply(ApplyOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		os.Chmod(filepath.Join(f.lower, "nd"), 0o755)
		os.Chmod(filepath.Join(elsewhere, "nd"), 0o755)
	})
	assert.Equal(t, readTree(t, f.lower), readTree(t, elsewhere))
}

func TestImportRefuses(t *testing.T) {
	tests := []struct {
		name    string
		entries []tar.Header
		want    string
	}{
		{"parent reference", []tar.Header{{Name: "../escape", Typeflag: tar.TypeReg}}, "leaves the directory"},
		{"absolute", []tar.Header{{Name: "/etc/passwd", Typeflag: tar.TypeReg}}, "leaves the directory"},
		{"through a symlink", []tar.Header{
			{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/tmp"},
			{Name: "link/file", Typeflag: tar.TypeReg},
		}, "not a directory"},
		{"hard link", []tar.Header{{Name: "h", Typeflag: tar.TypeLink, Linkname: "a.txt"}}, "unsupported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, h := range tt.entries {
				h.Mode = 0o644
				require.NoError(t, tw.WriteHeader(&h))
			}
			require.NoError(t, tw.Close())
			lower := t.TempDir()
			dir := filepath.Join(t.TempDir(), "cs")
			_, err := Import(dir, lower, &buf, ImportOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, err = os.Stat(dir)
			assert.True(t, os.IsNotExist(err), "a failed import leaves nothing")
		})
	}
}
