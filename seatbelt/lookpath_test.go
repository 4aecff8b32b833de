//go:build unix

package seatbelt

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/lookpath"
)

func TestWorkdir(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "file"), nil, 0o644))
	cases := []struct {
		name, dir, want string
		errno           syscall.Errno
	}{
		{"empty is the workspace", "", ws, 0},
		{"relative to the workspace", "sub", filepath.Join(ws, "sub"), 0},
		{"absolute", filepath.Join(ws, "sub"), filepath.Join(ws, "sub"), 0},
		{"missing", "nope", filepath.Join(ws, "nope"), syscall.ENOENT},
		{"a file", "file", filepath.Join(ws, "file"), syscall.ENOTDIR},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, err := Workdir(ws, c.dir)
			if c.errno == 0 {
				require.NoError(t, err)
				assert.Equal(t, c.want, dir)
				return
			}
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, LayerWorkdir, e.Layer)
			assert.Equal(t, c.want, e.Path)
			assert.ErrorIs(t, err, c.errno)
		})
	}
}

// LookPath counts an executable inside a hidden path as missing; the same
// lookup without the hiding finds it.
func TestLookPathHidden(t *testing.T) {
	bin := t.TempDir()
	tool := filepath.Join(bin, "tool")
	require.NoError(t, os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755))
	env := []string{"PATH=" + bin}

	p, err := LookPath("tool", bin, env, nil)
	require.NoError(t, err)
	assert.Equal(t, tool, p)

	_, err = LookPath("tool", bin, env, []string{bin})
	assert.ErrorIs(t, err, lookpath.ErrNotFound)
	_, err = LookPath(tool, bin, env, []string{tool})
	assert.ErrorIs(t, err, lookpath.ErrNotFound)
}
