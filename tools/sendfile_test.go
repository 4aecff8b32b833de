package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSendFile(t *testing.T) {
	tr := newTree(t)
	s, err := NewSendFile(tr.ws)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(tr.ws, "max.bin"), make([]byte, MaxSendFileBytes), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(tr.ws, "over.bin"), make([]byte, MaxSendFileBytes+1), 0o644))
	tests := []struct {
		path     string
		wantErr  error
		wantSize int
	}{
		{"a.txt", nil, 6},
		{filepath.Join(tr.ws, "sub", "b.txt"), nil, 5},
		{"max.bin", nil, MaxSendFileBytes},
		{"over.bin", ErrTooLarge, 0},
		{"sub", ErrIsDir, 0},
		{"/etc/passwd", ErrOutsideWorkspace, 0},
		{filepath.Join(tr.outside, "secret.txt"), ErrOutsideWorkspace, 0},
		{"link-out", ErrOutsideWorkspace, 0},
		{"dir-out/secret.txt", ErrOutsideWorkspace, 0},
		{"link-in", ErrSymlink, 0},
		{"/dev/zero", ErrOutsideWorkspace, 0},
		{"missing", ErrNotExist, 0},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			a, err := s.Load(SendFileArgs{FilePath: tt.path})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), "send_file "+tt.path)
				return
			}
			require.NoError(t, err)
			assert.Len(t, a.Data, tt.wantSize)
			assert.Equal(t, filepath.Base(tt.path), a.Name)
		})
	}
}

func TestSendFileContentType(t *testing.T) {
	tr := newTree(t)
	s, err := NewSendFile(tr.ws)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(tr.ws, "noext"), []byte("%PDF-1.4\n"), 0o644))
	a, err := s.Load(SendFileArgs{FilePath: "a.txt"})
	require.NoError(t, err)
	assert.Equal(t, "text/plain; charset=utf-8", a.ContentType)
	a, err = s.Load(SendFileArgs{FilePath: "noext"})
	require.NoError(t, err)
	assert.Equal(t, "application/pdf", a.ContentType)
}
