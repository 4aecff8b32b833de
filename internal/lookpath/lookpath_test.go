package lookpath

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFind(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"bin/tool": 0o755, "bin/plain": 0o644, "other/plain": 0o755, "local": 0o755} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), mode))
	}
	env := []string{"PATH=bin:" + filepath.Join(dir, "other")}
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"tool", filepath.Join(dir, "bin/tool"), nil},     // a relative entry is taken from dir
		{"plain", filepath.Join(dir, "other/plain"), nil}, // a later executable wins over an earlier plain file
		{"./local", filepath.Join(dir, "local"), nil},     // a name with a slash is relative to dir
		{"bin/plain", "", ErrNotExecutable},               // named directly and not executable
		{"./bin", "", ErrNotExecutable},                   // a directory
		{"missing", "", ErrNotFound},                      // nowhere on PATH
		{filepath.Join(dir, "nope"), "", ErrNotFound},     // absolute and missing
		{filepath.Join(dir, "bin/tool"), filepath.Join(dir, "bin/tool"), nil},
	} {
		got, err := Find(tc.name, dir, env, os.Stat)
		assert.ErrorIs(t, err, tc.err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	_, err := Find("plain", dir, []string{"PATH=bin"}, os.Stat)
	assert.ErrorIs(t, err, ErrNotExecutable, "found only without the execute bit")
	got, err := Find("sh", dir, nil, os.Stat)
	require.NoError(t, err, "no PATH: the default one")
	assert.True(t, filepath.IsAbs(got))
}
