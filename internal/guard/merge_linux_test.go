package guard

import (
	"fmt"
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
			assert.Empty(t, Merge(upper, host, "/ws/.git", []string{"/ws"}, nil))
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

// BenchmarkMerge merges what one commit on a repository of 10k files
// leaves in a stage (four loose objects, the index of 10k entries, the branch,
// two reflogs grown by a line, COMMIT_EDITMSG) from a tmpfs (/dev/shm,
// where stages live) into a git directory on the file system of the
// temporary directory.
func BenchmarkMerge(b *testing.B) {
	host := b.TempDir()
	entries := make([]indexEntry, 10000)
	for i := range entries {
		entries[i] = indexEntry{fmt.Sprintf("d%d/f%d", i/100, i%100), modeFile}
	}
	index := buildIndex(2, len(entries), indexEntries(2, entries))
	for _, d := range []string{"objects/info", "refs/heads", "logs/refs/heads"} {
		require.NoError(b, os.MkdirAll(filepath.Join(host, d), 0o755))
	}
	write := func(dir, rel string, data []byte) {
		require.NoError(b, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(dir, rel), data, 0o644))
	}
	write(host, "index", index)
	write(host, "HEAD", []byte("ref: refs/heads/main\n"))
	log := "0000 1111 a <a@example.com> 1 +0000\tcommit: x\n"
	write(host, "logs/HEAD", []byte(log))
	write(host, "logs/refs/heads/main", []byte(log))
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		upper, err := os.MkdirTemp("/dev/shm", "corral-merge-bench")
		require.NoError(b, err)
		for j := range 4 {
			write(upper, fmt.Sprintf("objects/%02x/%038d", (i*4+j)%256, i*4+j), make([]byte, 200))
		}
		index[len(index)-1]++ // the checksum
		write(upper, "index", index)
		write(upper, "COMMIT_EDITMSG", []byte("x\n"))
		write(upper, "refs/heads/main", []byte(fmt.Sprintf("%040d\n", i)))
		grown, err := os.ReadFile(filepath.Join(host, "logs/HEAD"))
		require.NoError(b, err)
		grown = append(grown, log...)
		write(upper, "logs/HEAD", grown)
		write(upper, "logs/refs/heads/main", grown)
		b.StartTimer()
		require.Empty(b, Merge(upper, host, "/ws/.git", []string{"/ws"}, nil))
		b.StopTimer()
		os.RemoveAll(upper)
		b.StartTimer()
	}
}

// TestMergeMessageInPlace lands a commit message over the host's own, as
// git writes it, unless the host's file has another link: that one is
// replaced, and the other name keeps its content.
func TestMergeMessageInPlace(t *testing.T) {
	for _, linked := range []bool{false, true} {
		host, upper := t.TempDir(), t.TempDir()
		msg := filepath.Join(host, "COMMIT_EDITMSG")
		require.NoError(t, os.WriteFile(msg, []byte("an old and longer message\n"), 0o644))
		other := filepath.Join(host, "other")
		if linked {
			require.NoError(t, os.Link(msg, other))
		}
		before, err := os.Stat(msg)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(upper, "COMMIT_EDITMSG"), []byte("new\n"), 0o644))
		assert.Empty(t, Merge(upper, host, "/ws/.git", []string{"/ws"}, nil))
		b, err := os.ReadFile(msg)
		require.NoError(t, err)
		assert.Equal(t, "new\n", string(b))
		after, err := os.Stat(msg)
		require.NoError(t, err)
		assert.Equal(t, !linked, os.SameFile(before, after), "linked=%v", linked)
		if linked {
			b, err := os.ReadFile(other)
			require.NoError(t, err)
			assert.Equal(t, "an old and longer message\n", string(b))
		}
	}
}

// TestMergeChecksIndex drops an index with an entry git would write into
// .git, and lands a good one beside the rest.
func TestMergeChecksIndex(t *testing.T) {
	host, upper := t.TempDir(), t.TempDir()
	old := buildIndex(2, 0)
	require.NoError(t, os.WriteFile(filepath.Join(host, "index"), old, 0o644))
	bad := buildIndex(2, 1, indexEntries(2, []indexEntry{{".git/hooks/pre-commit", modeFile}}))
	require.NoError(t, os.WriteFile(filepath.Join(upper, "index"), bad, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(upper, "ORIG_HEAD"), []byte("x\n"), 0o644))
	dropped := Merge(upper, host, "/ws/.git", []string{"/ws"}, nil)
	require.Len(t, dropped, 1)
	assert.Contains(t, dropped[0], `/ws/.git/index: not an index git may read: an entry ".git/hooks/pre-commit"`)
	b, err := os.ReadFile(filepath.Join(host, "index"))
	require.NoError(t, err)
	assert.Equal(t, old, b, "the host's index stays")
	assert.FileExists(t, filepath.Join(host, "ORIG_HEAD"))

	good := buildIndex(2, 1, indexEntries(2, []indexEntry{{"a/b", modeFile}}))
	require.NoError(t, os.WriteFile(filepath.Join(upper, "index"), good, 0o644))
	assert.Empty(t, Merge(upper, host, "/ws/.git", []string{"/ws"}, nil))
	b, err = os.ReadFile(filepath.Join(host, "index"))
	require.NoError(t, err)
	assert.Equal(t, good, b)
}
