package changeset

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sampleLower = tree{
	"a.txt":             "hello\n",
	"d/x":               "keep\n",
	"d/y":               "old\n",
	"e/":                "",
	"e/deep/z":          "z\n",
	"link":              "-> a.txt",
	"bin":               "bin\x00ary",
	"dir-to-file/":      "",
	"dir-to-file/inner": "i\n",
	"file-to-dir":       "f\n",
}

func TestList(t *testing.T) {
	tests := []struct {
		name  string
		apply func(t *testing.T, f *fixture)
		want  []string
	}{
		{"nothing", func(*testing.T, *fixture) {}, []string{}},
		{"create", func(t *testing.T, f *fixture) {
			f.write(t, "new.txt", "new\n")
			f.write(t, "d/new", "n\n")
		}, []string{"A d/new", "A new.txt"}},
		{"modify", func(t *testing.T, f *fixture) {
			f.write(t, "a.txt", "hello\nworld\n")
		}, []string{"M a.txt"}},
		{"copied up but equal is no change", func(t *testing.T, f *fixture) {
			f.write(t, "a.txt", "hello\n")
			f.write(t, "d/x", "keep\n")
		}, []string{}},
		{"same size, other content", func(t *testing.T, f *fixture) {
			f.write(t, "a.txt", "HELLO\n")
		}, []string{"M a.txt"}},
		{"delete file", func(t *testing.T, f *fixture) {
			f.whiteout(t, "d/x")
		}, []string{"D d/x"}},
		{"delete directory lists its entries", func(t *testing.T, f *fixture) {
			f.whiteout(t, "e")
		}, []string{"D e/", "D e/deep/", "D e/deep/z"}},
		{"rename", func(t *testing.T, f *fixture) {
			f.write(t, "b.txt", "hello\n")
			f.whiteout(t, "a.txt")
		}, []string{"D a.txt", "A b.txt"}},
		{"directory replaced", func(t *testing.T, f *fixture) {
			f.replaceDir(t, "d")
			f.write(t, "d/x", "keep\n")
			f.write(t, "d/fresh", "f\n")
		}, []string{"R d/", "A d/fresh", "D d/y"}},
		{"directory replaced, entry changed", func(t *testing.T, f *fixture) {
			f.replaceDir(t, "d")
			f.write(t, "d/x", "other\n")
		}, []string{"R d/", "M d/x", "D d/y"}},
		{"directory becomes file", func(t *testing.T, f *fixture) {
			f.write(t, "dir-to-file", "now a file\n")
		}, []string{"R dir-to-file", "D dir-to-file/inner"}},
		{"file becomes directory", func(t *testing.T, f *fixture) {
			f.write(t, "file-to-dir/", "")
			f.write(t, "file-to-dir/child", "c\n")
		}, []string{"R file-to-dir/", "A file-to-dir/child"}},
		{"symlink retargeted", func(t *testing.T, f *fixture) {
			f.write(t, "link", "-> d/x")
		}, []string{"M link"}},
		{"symlink replaces file", func(t *testing.T, f *fixture) {
			f.write(t, "a.txt", "-> bin")
		}, []string{"R a.txt"}},
		{"permissions", func(t *testing.T, f *fixture) {
			f.write(t, "a.txt", "hello\n")
			f.chmod(t, "a.txt", 0o600)
			f.copyUp(t, "e/x")
			f.chmod(t, "e", 0o700)
		}, []string{"M a.txt", "M e/"}},
		{"binary", func(t *testing.T, f *fixture) {
			f.write(t, "bin", "bin\x00arY")
		}, []string{"M bin"}},
		{"new empty directory", func(t *testing.T, f *fixture) {
			f.write(t, "nd/", "")
		}, []string{"A nd/"}},
		{"whiteout of something gone from the host", func(t *testing.T, f *fixture) {
			f.whiteout(t, "gone")
		}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sampleLower)
			tt.apply(t, f)
			got, err := f.cs.List()
			require.NoError(t, err)
			assert.Equal(t, tt.want, summary(got))
		})
	}
}

func TestListSizesModesTargets(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", "hello\nworld\n")
	f.chmod(t, "a.txt", 0o750)
	f.write(t, "link", "-> d/x")
	f.whiteout(t, "d/y")
	got, err := f.cs.List()
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, Change{Root: f.lower, Path: "a.txt", Status: Modified, Type: File, OldType: File, Size: 12, OldSize: 6, Mode: 0o750, OldMode: 0o644}, got[0])
	assert.Equal(t, Change{Root: f.lower, Path: "d/y", Status: Deleted, OldType: File, OldSize: 4, OldMode: 0o644}, got[1])
	assert.Equal(t, Symlink, got[2].Type)
	assert.Equal(t, "d/x", got[2].Target)
}

func TestListJSON(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", "changed\n")
	f.chmod(t, "a.txt", fs.ModeSetuid|0o755)
	got, err := f.cs.List()
	require.NoError(t, err)
	b, err := json.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, `[{"root":`+quoteJSON(t, f.lower)+`,"path":"a.txt","status":"modified","type":"file","old_type":"file",
		"size":8,"old_size":6,"mode":"4755","old_mode":"0644"}]`, string(b))
	var back []Change
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, got, back)
}

func TestListXattrWhiteout(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.copyUp(t, "d/x")
	p := filepath.Join(f.upper, "d", "x")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, setXattr(p, "user.overlay.whiteout", ""))
	got, err := f.cs.List()
	require.NoError(t, err)
	assert.Equal(t, []string{"D d/x"}, summary(got))
}

// TestListLowerGone refuses to compare with a directory that moved away,
// which would list every change as a new file.
func TestListLowerGone(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", "changed\n")
	moved := f.lower + ".moved"
	require.NoError(t, os.Rename(f.lower, moved))
	_, err := f.cs.List()
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), "its directory "+f.lower)
	assert.ErrorIs(t, f.cs.Diff(io.Discard), fs.ErrNotExist)

	require.NoError(t, os.WriteFile(f.lower, nil, 0o644))
	_, err = f.cs.List()
	assert.ErrorContains(t, err, "not a directory")

	require.NoError(t, os.Remove(f.lower))
	require.NoError(t, os.Rename(moved, f.lower))
	changes, err := f.cs.List()
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.Equal(t, Modified, changes[0].Status)
}
