package changeset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreateOpen(t *testing.T) {
	lower := t.TempDir()
	require.NoError(t, os.Chmod(lower, 0o751))
	dir := filepath.Join(t.TempDir(), "new", "cs")
	cs, err := Create(dir, lower)
	require.NoError(t, err)
	for _, name := range []string{metaName, "roots/0/" + baselineName, "roots/0/" + upperName, "roots/0/" + workName} {
		_, err := os.Lstat(filepath.Join(dir, name))
		assert.NoError(t, err, name)
	}
	fi, err := os.Stat(cs.Roots()[0].Upper)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o751), fi.Mode().Perm(), "the merged root looks like the original")

	opened, err := Open(dir)
	require.NoError(t, err)
	assert.Equal(t, cs.Roots(), opened.Roots())
	assert.Equal(t, cs.Dir(), opened.Dir())
	assert.True(t, cs.Created().Equal(opened.Created()))
}

func TestCreateRefuses(t *testing.T) {
	base := t.TempDir()
	lower := filepath.Join(base, "lower")
	require.NoError(t, os.Mkdir(lower, 0o755))
	full := filepath.Join(base, "full")
	require.NoError(t, os.Mkdir(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "x"), nil, 0o644))
	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	tests := []struct {
		name, dir, lower, want string
	}{
		{"not empty", full, lower, "not empty"},
		{"inside the directory", filepath.Join(lower, "cs"), lower, "overlaps"},
		{"around the directory", base, lower, "overlaps"},
		{"directory missing", filepath.Join(base, "cs1"), filepath.Join(base, "missing"), "no such file"},
		{"directory is a file", filepath.Join(base, "cs2"), file, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Create(tt.dir, tt.lower)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "create changeset")
			_, err = os.Stat(filepath.Join(lower, "cs"))
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing made in the directory")
		})
	}
}

func TestOpenRefuses(t *testing.T) {
	empty := t.TempDir()
	_, err := Open(empty)
	assert.ErrorIs(t, err, ErrNotChangeset)
	_, err = Open(filepath.Join(empty, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	f := newFixture(t, tree{"a": "a"})
	require.NoError(t, os.WriteFile(filepath.Join(f.cs.Dir(), metaName), []byte(`{"version":99}`), 0o600))
	_, err = Open(f.cs.Dir())
	assert.ErrorContains(t, err, "format version 99")
}

func TestDiscard(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "ro/inner/file", "x\n")
	f.chmod(t, "ro/inner", 0o500)
	f.chmod(t, "ro", 0o000)
	f.whiteout(t, "a.txt")
	before := readTree(t, f.lower)
	require.NoError(t, f.cs.Discard())
	_, err := os.Stat(f.cs.Dir())
	assert.True(t, os.IsNotExist(err))
	assert.Equal(t, before, readTree(t, f.lower), "the originals are untouched")
}
