package guard

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMergeReflogs lands a reflog that grew inside by appending to the
// host's file (the same inode keeps the old lines), and one rewritten
// inside (expired) by replacing it as a whole.
func TestMergeReflogs(t *testing.T) {
	tests := []struct {
		name, host, staged string
		sameInode          bool
	}{
		{"grown", "a\nb\n", "a\nb\nc\n", true},
		{"rewritten", "a\nb\n", "b\nc\nd\n", false},
		{"shrunk", "a\nb\n", "b\n", false},
		{"new", "", "a\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, upper := t.TempDir(), t.TempDir()
			for _, d := range []string{host, upper} {
				require.NoError(t, os.MkdirAll(filepath.Join(d, "logs/refs/heads"), 0o755))
			}
			log := filepath.Join(host, "logs/refs/heads/main")
			if tt.host != "" {
				require.NoError(t, os.WriteFile(log, []byte(tt.host), 0o644))
			}
			before, _ := os.Stat(log)
			require.NoError(t, os.WriteFile(filepath.Join(upper, "logs/refs/heads/main"), []byte(tt.staged), 0o644))
			assert.Empty(t, Merge(upper, host, "/ws/.git", []string{"/ws"}))
			b, err := os.ReadFile(log)
			require.NoError(t, err)
			assert.Equal(t, tt.staged, string(b))
			after, err := os.Stat(log)
			require.NoError(t, err)
			assert.Equal(t, tt.sameInode, before != nil && os.SameFile(before, after))
			ents, err := os.ReadDir(filepath.Join(host, "logs/refs/heads"))
			require.NoError(t, err)
			assert.Len(t, ents, 1, "no temporary file left")
		})
	}
}
