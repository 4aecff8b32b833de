package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newFileTool(t *testing.T) (*File, tree) {
	t.Helper()
	tr := newTree(t)
	f, err := NewFile(tr.ws)
	require.NoError(t, err)
	return f, tr
}

func TestFileRead(t *testing.T) {
	f, tr := newFileTool(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(tr.ws, "fifo"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(tr.ws, "big"), make([]byte, 2<<20), 0o644))
	tests := []struct {
		path    string
		want    string
		wantErr error
	}{
		{"a.txt", "alpha\n", nil},
		{"sub/b.txt", "beta\n", nil},
		{filepath.Join(tr.ws, "a.txt"), "alpha\n", nil},
		{"dir-in/b.txt", "beta\n", nil},
		{"../outside/secret.txt", "", ErrOutsideWorkspace},
		{filepath.Join(tr.outside, "secret.txt"), "", ErrOutsideWorkspace},
		{"link-out", "", ErrOutsideWorkspace},
		{"dir-out/secret.txt", "", ErrOutsideWorkspace},
		{"link-in", "", ErrSymlink},
		{"missing.txt", "", ErrNotExist},
		{"sub", "", ErrIsDir},
		{"fifo", "", ErrNotRegular},
		{"big", "", ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := f.Read(tt.path)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.True(t, strings.HasPrefix(err.Error(), "read "+tt.path+": "), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFileWrite(t *testing.T) {
	tests := []struct {
		path    string
		wantErr error
		wantAt  string // where the content lands, relative to the workspace
	}{
		{"new.txt", nil, "new.txt"},
		{"a.txt", nil, "a.txt"},
		{"deep/new/dirs/c.txt", nil, "deep/new/dirs/c.txt"},
		{"dir-in/c.txt", nil, "sub/c.txt"},
		{"../outside/pwned.txt", ErrOutsideWorkspace, ""},
		{"/tmp/pwned.txt", ErrOutsideWorkspace, ""},
		{"dir-out/pwned.txt", ErrOutsideWorkspace, ""},
		{"link-out", ErrOutsideWorkspace, ""},
		{"link-in", ErrSymlink, ""},
		{"dangling", ErrSymlink, ""},
		{"SOUL.md", ErrProtected, ""},
		{"identity.md", ErrProtected, ""},
		{"User.MD", ErrProtected, ""},
		{"sub/soul.md", ErrProtected, ""},
		{"SOUL.md.bak", nil, "SOUL.md.bak"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			f, tr := newFileTool(t)
			err := f.Write(tt.path, "written")
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), "write "+tt.path)
				data, _ := os.ReadFile(filepath.Join(tr.outside, "secret.txt"))
				assert.Equal(t, "outside secret\n", string(data))
				assert.NoFileExists(t, filepath.Join(tr.outside, "pwned.txt"))
				assert.NoFileExists(t, filepath.Join(tr.outside, "new.txt"))
				return
			}
			require.NoError(t, err)
			data, err := os.ReadFile(filepath.Join(tr.ws, tt.wantAt))
			require.NoError(t, err)
			assert.Equal(t, "written", string(data))
		})
	}
}

func TestFileList(t *testing.T) {
	f, tr := newFileTool(t)
	fifo := filepath.Join(tr.ws, "fifo")
	entries, cut, err := f.List(".")
	require.NoError(t, err)
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	assert.False(t, cut)
	assert.Equal(t, []Entry{
		{Name: "a.txt", Type: "file", Size: 6},
		{Name: "dangling", Type: "symlink"},
		{Name: "dir-in", Type: "symlink"},
		{Name: "dir-out", Type: "symlink"},
		{Name: "link-in", Type: "symlink"},
		{Name: "link-out", Type: "symlink"},
		{Name: "sub", Type: "dir"},
	}, entries)

	f.MaxListItems = 2
	entries, cut, err = f.List(tr.ws)
	require.NoError(t, err)
	assert.True(t, cut)
	assert.Len(t, entries, 2)

	for path, want := range map[string]error{
		"..":      ErrOutsideWorkspace,
		"dir-out": ErrOutsideWorkspace,
		"dir-in":  ErrSymlink,
		"/":       ErrOutsideWorkspace,
		"fifo":    ErrNotDir,
		"a.txt":   ErrNotDir,
	} {
		_, _, err := f.List(path)
		assert.ErrorIs(t, err, want, path)
	}
}

func TestFileRun(t *testing.T) {
	f, _ := newFileTool(t)
	out, err := f.Run(FileArgs{Operation: "write", Path: "n.txt", Content: "hello"})
	require.NoError(t, err)
	assert.Equal(t, "Wrote 5 bytes to n.txt.", out)
	out, err = f.Run(FileArgs{Operation: "read", Path: "n.txt"})
	require.NoError(t, err)
	assert.Equal(t, "hello", out)
	out, err = f.Run(FileArgs{Operation: "list", Path: "sub"})
	require.NoError(t, err)
	assert.Equal(t, "b.txt (5 bytes)\n", out)
	_, err = f.Run(FileArgs{Operation: "delete", Path: "n.txt"})
	assert.EqualError(t, err, `invalid operation "delete": want "read", "write" or "list"`)
}

func TestIsProtectedFile(t *testing.T) {
	for p, want := range map[string]bool{
		"SOUL.md": true, "/ws/IDENTITY.md": true, "user.md": true, "a/b/Soul.Md": true,
		"SOUL.txt": false, "MYSOUL.md": false, "SOUL.md/x": false,
	} {
		assert.Equal(t, want, IsProtectedFile(p), p)
	}
}
