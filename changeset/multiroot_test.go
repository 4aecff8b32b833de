package changeset

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newFixtures makes one changeset over a directory per tree and returns a
// fixture for each root, in order.
func newFixtures(t testing.TB, trees ...tree) []*fixture {
	t.Helper()
	base := t.TempDir()
	lowers := make([]string, len(trees))
	for i, tr := range trees {
		lowers[i] = filepath.Join(base, "lower"+string(rune('a'+i)))
		require.NoError(t, os.Mkdir(lowers[i], 0o755))
		writeTree(t, lowers[i], tr)
	}
	cs, err := Create(filepath.Join(base, "cs"), lowers...)
	require.NoError(t, err)
	fs := make([]*fixture, len(trees))
	for i, r := range cs.Roots() {
		fs[i] = &fixture{cs: cs, lower: r.Path, upper: r.Upper}
	}
	return fs
}

var secondLower = tree{"conf.toml": "x = 1\n", "data/": "", "data/old": "old\n"}

func TestCreateRoots(t *testing.T) {
	f := newFixtures(t, sampleLower, secondLower)
	cs := f[0].cs
	require.Len(t, cs.Roots(), 2)
	for i, r := range cs.Roots() {
		assert.Equal(t, filepath.Join(cs.Dir(), "roots", []string{"0", "1"}[i]), filepath.Dir(r.Upper))
		assert.Equal(t, filepath.Dir(r.Upper), filepath.Dir(r.Work))
		_, err := os.Stat(filepath.Join(filepath.Dir(r.Upper), baselineName))
		assert.NoError(t, err, "each root keeps its baseline")
	}
	assert.Equal(t, []string{f[0].lower, f[1].lower}, cs.RootPaths())
	assert.Equal(t, cs.Roots(), Planned(cs.Dir(), cs.RootPaths()...), "Planned foresees the layout")

	opened, err := Open(cs.Dir())
	require.NoError(t, err)
	assert.Equal(t, cs.Roots(), opened.Roots())

	require.NoError(t, cs.Discard())
	_, err = os.Stat(cs.Dir())
	assert.ErrorIs(t, err, os.ErrNotExist, "every root's parts are gone")
}

func TestCreateRootsRefuses(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	inner := filepath.Join(a, "inner")
	require.NoError(t, os.MkdirAll(inner, 0o755))
	require.NoError(t, os.Mkdir(b, 0o755))
	tests := []struct {
		name  string
		dir   string
		roots []string
		want  string
	}{
		{"none", filepath.Join(base, "cs0"), nil, "no directory"},
		{"twice", filepath.Join(base, "cs1"), []string{a, b, a}, "named twice"},
		{"nested", filepath.Join(base, "cs2"), []string{a, inner}, "overlap"},
		{"inside the second", filepath.Join(b, "cs"), []string{a, b}, "overlaps " + b},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Create(tt.dir, tt.roots...)
			require.ErrorContains(t, err, tt.want)
			_, err = os.Stat(tt.dir)
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing made")
		})
	}
}

// TestOpenVersion1 reads a changeset in the layout of format version 1: one
// directory, its parts in the changeset directory itself.
func TestOpenVersion1(t *testing.T) {
	lower := t.TempDir()
	writeTree(t, lower, tree{"a.txt": "hello\n", "old": "old\n"})
	dir := filepath.Join(t.TempDir(), "cs")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, upperName), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(dir, workName), 0o700))
	base, err := recordBaseline(lower)
	require.NoError(t, err)
	require.NoError(t, Root{dir: dir}.saveBaseline(base))
	meta, err := json.Marshal(map[string]any{"version": 1, "lower": lower, "created": time.Now().UTC()})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, metaName), meta, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, upperName, "a.txt"), []byte("changed\n"), 0o644))

	cs, err := Open(dir)
	require.NoError(t, err)
	assert.Equal(t, []Root{{Path: lower, Upper: filepath.Join(dir, upperName), Work: filepath.Join(dir, workName), dir: dir}}, cs.Roots())
	changes, err := cs.List()
	require.NoError(t, err)
	assert.Equal(t, []string{"M a.txt"}, summary(changes))

	require.NoError(t, os.WriteFile(filepath.Join(lower, "a.txt"), []byte("host\n"), 0o644))
	_, err = cs.Apply(ApplyOptions{})
	var ce *ConflictError
	require.ErrorAs(t, err, &ce, "the version 1 baseline is read")
	_, err = cs.Apply(ApplyOptions{Force: true})
	require.NoError(t, err)
	assert.Equal(t, tree{"a.txt": "changed\n", "old": "old\n"}, readTree(t, lower))

	require.NoError(t, cs.Discard())
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestListRoots(t *testing.T) {
	f := newFixtures(t, sampleLower, secondLower)
	f[1].write(t, "conf.toml", "x = 2\n")
	f[1].whiteout(t, "data/old")
	f[0].write(t, "new.txt", "new\n")
	changes, err := f[0].cs.List()
	require.NoError(t, err)
	assert.Equal(t, []string{"A new.txt", "M conf.toml", "D data/old"}, summary(changes), "root by root")
	assert.Equal(t, []string{f[0].lower, f[1].lower, f[1].lower},
		[]string{changes[0].Root, changes[1].Root, changes[2].Root})
	assert.Equal(t, filepath.Join(f[1].lower, "data", "old"), changes[2].RealPath())
}

func TestDiffRoots(t *testing.T) {
	f := newFixtures(t, sampleLower, secondLower)
	f[0].write(t, "a.txt", "hello\nworld\n")
	f[1].write(t, "conf.toml", "x = 2\n")
	var out bytes.Buffer
	require.NoError(t, f[0].cs.Diff(&out))
	a, b := strings.TrimPrefix(f[0].lower, "/"), strings.TrimPrefix(f[1].lower, "/")
	assert.Equal(t, "diff --git a/"+a+"/a.txt b/"+a+"/a.txt\n--- a/"+a+"/a.txt\n+++ b/"+a+"/a.txt\n@@ -1 +1,2 @@\n hello\n+world\n"+
		"diff --git a/"+b+"/conf.toml b/"+b+"/conf.toml\n--- a/"+b+"/conf.toml\n+++ b/"+b+"/conf.toml\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
		out.String(), "several roots: absolute names")
}

func TestApplyRoots(t *testing.T) {
	f := newFixtures(t, sampleLower, secondLower)
	f[0].write(t, "a.txt", "changed\n")
	f[1].write(t, "conf.toml", "x = 2\n")
	f[1].whiteout(t, "data/old")
	res, err := f[0].cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"M a.txt", "D data/old", "M conf.toml"}, summary(res.Applied), "root by root, deletions first")
	assert.Equal(t, "changed\n", readTree(t, f[0].lower)["a.txt"])
	assert.Equal(t, tree{"conf.toml": "x = 2\n", "data/": ""}, readTree(t, f[1].lower))
	left, err := f[0].cs.List()
	require.NoError(t, err)
	assert.Empty(t, left, "every root starts afresh")
}

// TestApplyRootsConflict checks every root before it applies any: a
// conflict in the second root keeps the first one's changes out too.
func TestApplyRootsConflict(t *testing.T) {
	f := newFixtures(t, sampleLower, secondLower)
	f[0].write(t, "a.txt", "changed\n")
	f[1].write(t, "conf.toml", "x = 2\n")
	afterTick(t, filepath.Join(f[1].lower, "conf.toml"))
	appendFile(t, filepath.Join(f[1].lower, "conf.toml"), "y = 3\n")
	before := []tree{readTree(t, f[0].lower), readTree(t, f[1].lower)}

	res, err := f[0].cs.Apply(ApplyOptions{})
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Nil(t, res)
	assert.Equal(t, []Conflict{{Root: f[1].lower, Path: "conf.toml", Reason: "changed on the host"}}, ce.Conflicts)
	assert.Contains(t, err.Error(), filepath.Join(f[1].lower, "conf.toml"), "the conflict is named by its full path")
	assert.Equal(t, before, []tree{readTree(t, f[0].lower), readTree(t, f[1].lower)}, "nothing applied in either root")

	_, err = f[0].cs.Apply(ApplyOptions{Force: true})
	require.NoError(t, err)
	assert.Equal(t, "changed\n", readTree(t, f[0].lower)["a.txt"])
	assert.Equal(t, "x = 2\n", readTree(t, f[1].lower)["conf.toml"])
}

// TestExportImportRoots replays a changeset of two roots on copies of both:
// the first stands for the import's lower, the second as mapped.
func TestExportImportRoots(t *testing.T) {
	f := newFixtures(t, sampleLower, secondLower)
	f[0].write(t, "a.txt", "changed\n")
	f[0].whiteout(t, "e")
	f[1].write(t, "conf.toml", "x = 2\n")
	f[1].replaceDir(t, "data")
	f[1].write(t, "data/fresh", "f\n")
	var buf bytes.Buffer
	require.NoError(t, f[0].cs.Export(&buf))
	archive := buf.Bytes()

	names := archiveNames(t, archive)
	b := strings.TrimPrefix(f[1].lower, "/")
	assert.Contains(t, names, b+"/data/.wh..wh..opq", "several roots: absolute names")
	assert.Contains(t, names, strings.TrimPrefix(f[0].lower, "/")+"/.wh.e")

	copies := []string{filepath.Join(t.TempDir(), "ws"), filepath.Join(t.TempDir(), "conf")}
	require.NoError(t, os.Mkdir(copies[0], 0o755))
	require.NoError(t, os.Mkdir(copies[1], 0o755))
	writeTree(t, copies[0], sampleLower)
	writeTree(t, copies[1], secondLower)
	imported, err := Import(filepath.Join(t.TempDir(), "imported"), copies[0], bytes.NewReader(archive),
		ImportOptions{Roots: map[string]string{f[1].lower: copies[1]}})
	require.NoError(t, err)
	assert.Equal(t, copies, imported.RootPaths())

	want, err := f[0].cs.List()
	require.NoError(t, err)
	got, err := imported.List()
	require.NoError(t, err)
	assert.Equal(t, rootless(want), rootless(got))
	assert.Equal(t, copies[1], got[len(got)-1].Root)

	_, err = f[0].cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	_, err = imported.Apply(ApplyOptions{})
	require.NoError(t, err)
	assert.Equal(t, readTree(t, f[0].lower), readTree(t, copies[0]))
	assert.Equal(t, readTree(t, f[1].lower), readTree(t, copies[1]))
}

// TestImportRootsSamePath maps a root to its own path when asked, refuses a
// root left out of ImportOptions and a mapping for a root the archive does
// not have.
func TestImportRootsSamePath(t *testing.T) {
	f := newFixtures(t, sampleLower, secondLower)
	f[1].write(t, "conf.toml", "x = 2\n")
	var buf bytes.Buffer
	require.NoError(t, f[0].cs.Export(&buf))
	archive := buf.Bytes()

	ws := t.TempDir()
	dir := filepath.Join(t.TempDir(), "cs")
	_, err := Import(dir, ws, bytes.NewReader(archive), ImportOptions{Roots: map[string]string{"/nowhere": ws}})
	require.ErrorContains(t, err, "no directory /nowhere to map")
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, err = Import(dir, ws, bytes.NewReader(archive), ImportOptions{})
	var ue *UnmappedRootError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, f[1].lower, ue.Root)
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist)

	imported, err := Import(dir, ws, bytes.NewReader(archive), ImportOptions{Roots: map[string]string{f[1].lower: f[1].lower}})
	require.NoError(t, err)
	assert.Equal(t, []string{ws, f[1].lower}, imported.RootPaths())
	changes, err := imported.List()
	require.NoError(t, err)
	assert.Equal(t, []string{"M conf.toml"}, summary(changes))
}

func TestImportRootsRefuses(t *testing.T) {
	lower, other := t.TempDir(), t.TempDir()
	tests := []struct {
		name  string
		roots string
		entry string
		want  string
	}{
		{"entry outside the roots", `["/a","/b"]`, "c/x", "outside the archive's directories"},
		{"relative root", `["a"]`, "x", "not a clean absolute path"},
		{"nested roots", `["/a","/a/b"]`, "a/x", "overlap"},
		{"not JSON", `/a`, "x", "list of directories"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
				PAXRecords: map[string]string{rootsRecord: tt.roots}}))
			require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: tt.entry, Mode: 0o644}))
			require.NoError(t, tw.Close())
			dir := filepath.Join(t.TempDir(), "cs")
			_, err := Import(dir, lower, &buf, ImportOptions{Roots: map[string]string{"/b": other}})
			require.ErrorContains(t, err, tt.want)
			_, err = os.Stat(dir)
			assert.ErrorIs(t, err, os.ErrNotExist, "a failed import leaves nothing")
		})
	}
}

// TestImportWithoutRoots reads an archive as Export wrote it before
// changesets had several roots: no global header, one root.
func TestImportWithoutRoots(t *testing.T) {
	lower := t.TempDir()
	writeTree(t, lower, tree{"a.txt": "hello\n"})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ".wh.a.txt", Mode: 0o600}))
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "b.txt", Mode: 0o644, Size: 2}))
	_, err := tw.Write([]byte("b\n"))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	cs, err := Import(filepath.Join(t.TempDir(), "cs"), lower, &buf, ImportOptions{})
	require.NoError(t, err)
	changes, err := cs.List()
	require.NoError(t, err)
	assert.Equal(t, []string{"D a.txt", "A b.txt"}, summary(changes))
}

func archiveNames(t *testing.T, archive []byte) []string {
	t.Helper()
	var names []string
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	return names
}
