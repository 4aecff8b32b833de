package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolve(t *testing.T) {
	tr := newTree(t)
	ws, err := newWorkspace(tr.ws)
	require.NoError(t, err)
	tests := []struct {
		name    string
		path    string
		wantRel string
		wantErr error // nil: resolves to wantRel
	}{
		{"relative file", "a.txt", "a.txt", nil},
		{"absolute file", filepath.Join(tr.ws, "sub", "b.txt"), "sub/b.txt", nil},
		{"workspace root", ".", ".", nil},
		{"new file", "new.txt", "new.txt", nil},
		{"new file in new dirs", "x/y/z.txt", "x/y/z.txt", nil},
		{"dot-dot staying inside", "sub/../a.txt", "a.txt", nil},
		{"through dir symlink inside", "dir-in/b.txt", "sub/b.txt", nil},
		{"new file through dir symlink inside", "dir-in/new.txt", "sub/new.txt", nil},
		{"dot-dot out", "../outside/secret.txt", "", ErrOutsideWorkspace},
		{"absolute outside", filepath.Join(tr.outside, "secret.txt"), "", ErrOutsideWorkspace},
		{"etc passwd", "/etc/passwd", "", ErrOutsideWorkspace},
		{"new file outside", "/nonexistent-dir/x", "", ErrOutsideWorkspace},
		{"workspace sibling with shared prefix", tr.ws + "2/x", "", ErrOutsideWorkspace},
		{"through dir symlink outside", "dir-out/secret.txt", "", ErrOutsideWorkspace},
		{"new file through dir symlink outside", "dir-out/new.txt", "", ErrOutsideWorkspace},
		{"symlink to outside file", "link-out", "", ErrOutsideWorkspace},
		{"symlink to inside file", "link-in", "", ErrSymlink},
		{"dangling symlink", "dangling", "", ErrSymlink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ws.resolve("read", tt.path)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				var pe *PathError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, tt.path, pe.Path)
				assert.Contains(t, err.Error(), tt.path)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantRel, r.rel)
			assert.Equal(t, filepath.Join(tr.ws, tt.wantRel), r.abs)
		})
	}
}

func TestResolveBadArguments(t *testing.T) {
	ws, err := newWorkspace(t.TempDir())
	require.NoError(t, err)
	for _, p := range []string{"", "a\x00b"} {
		_, err := ws.resolve("read", p)
		var ae *ArgError
		require.ErrorAs(t, err, &ae, "%q", p)
	}
}

func TestResolveThroughFile(t *testing.T) {
	tr := newTree(t)
	ws, err := newWorkspace(tr.ws)
	require.NoError(t, err)
	_, err = ws.resolve("write", "a.txt/new")
	var pe *PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "write a.txt/new: not a directory", err.Error())
}

func TestOutsideErrorNamesWorkspace(t *testing.T) {
	tr := newTree(t)
	ws, err := newWorkspace(tr.ws)
	require.NoError(t, err)
	_, err = ws.resolve("read", "link-out")
	require.Error(t, err)
	assert.Equal(t, "read link-out: outside the workspace (resolves to "+filepath.Join(tr.outside, "secret.txt")+
		"); paths must be inside the workspace "+tr.ws, err.Error())
}

func TestWorkingDir(t *testing.T) {
	tr := newTree(t)
	ws, err := newWorkspace(tr.ws)
	require.NoError(t, err)
	tests := []struct {
		name    string
		dir     string
		want    string
		wantErr error
	}{
		{"empty is the workspace", "", tr.ws, nil},
		{"relative", "sub", filepath.Join(tr.ws, "sub"), nil},
		{"absolute", filepath.Join(tr.ws, "sub"), filepath.Join(tr.ws, "sub"), nil},
		{"dot", ".", tr.ws, nil},
		{"symlink to a dir inside", "dir-in", filepath.Join(tr.ws, "sub"), nil},
		{"symlink to a dir outside", "dir-out", "", ErrOutsideWorkspace},
		{"parent", "..", "", ErrOutsideWorkspace},
		{"absolute outside", tr.outside, "", ErrOutsideWorkspace},
		{"root", "/", "", ErrOutsideWorkspace},
		{"missing", "nope", "", ErrNotExist},
		{"a file", "a.txt", "", ErrNotDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ws.dir(tt.dir)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), "working_dir "+tt.dir)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNewWorkspace(t *testing.T) {
	tr := newTree(t)
	alias := filepath.Join(tr.base, "alias")
	require.NoError(t, os.Symlink(tr.ws, alias))
	ws, err := newWorkspace(alias)
	require.NoError(t, err)
	assert.Equal(t, tr.ws, ws.root, "the workspace is canonicalized")

	for _, bad := range []string{"", filepath.Join(tr.base, "missing"), filepath.Join(tr.ws, "a.txt")} {
		_, err := newWorkspace(bad)
		assert.Error(t, err, bad)
	}
}
