package nsjail

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A call fails anyway, sandbox or not, when the name it creates exists,
// the name it changes is missing, or the caller's own permissions refuse
// it; otherwise the sandbox is why it fails.
func TestFailsAnyway(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	full := filepath.Join(dir, "full")
	require.NoError(t, os.Mkdir(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "f"), nil, 0o644))
	locked := filepath.Join(dir, "locked")
	require.NoError(t, os.Mkdir(locked, 0o755))
	missingPath := filepath.Join(dir, "missing")

	var st unix.Stat_t
	require.NoError(t, unix.Stat(dir, &st))
	owner := creds{uid: st.Uid, gid: st.Gid}
	if owner.uid == 0 {
		// Root may anything: the files go to a user that is not.
		owner = creds{uid: 1000, gid: 1000}
		require.NoError(t, os.Chown(dir, 1000, 1000))
		require.NoError(t, os.Chown(file, 1000, 1000))
	}
	stranger := creds{uid: owner.uid + 1, gid: owner.gid + 1}
	root := creds{}

	tests := []struct {
		name  string
		fails bool
		got   bool
	}{
		{"mkdir of an existing directory", true, createFails(stranger, dir)},
		{"mkdir under a missing directory", true, createFails(owner, filepath.Join(missingPath, "x"))},
		{"mkdir where its owner may write", false, createFails(owner, filepath.Join(dir, "new"))},
		{"mkdir where the mode refuses", true, createFails(stranger, filepath.Join(dir, "new"))},
		{"mkdir as root", false, createFails(root, filepath.Join(dir, "new"))},
		{"unlink of a missing file", true, removeFails(owner, missingPath, false)},
		{"unlink of a directory", true, removeFails(owner, full, false)},
		{"rmdir of a full directory", true, removeFails(owner, full, true)},
		{"rmdir of an empty one", false, removeFails(owner, locked, true)},
		{"unlink of a file", false, removeFails(owner, file, false)},
		{"open to write a file of its own", false, openFails(owner, file, unix.O_WRONLY)},
		{"open to write another's file", true, openFails(stranger, file, unix.O_WRONLY)},
		{"open a directory to write", true, openFails(owner, dir, unix.O_WRONLY)},
		{"O_EXCL of an existing file", true, openFails(owner, file, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY)},
		{"O_CREAT of a new file", false, openFails(owner, filepath.Join(dir, "new"), unix.O_CREAT|unix.O_WRONLY)},
		{"open without O_CREAT of a missing file", true, openFails(owner, missingPath, unix.O_WRONLY)},
		{"rename of a missing file", true, renameFails(owner, missingPath, filepath.Join(dir, "to"), 0)},
		{"rename onto an existing name without replacing", true, renameFails(owner, file, full, unix.RENAME_NOREPLACE)},
		{"rename", false, renameFails(owner, file, filepath.Join(dir, "to"), 0)},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.fails, tt.got, tt.name)
	}
}

// A chown by another than root is its owner's, keeping the owner and
// choosing one of its groups.
func TestMayChown(t *testing.T) {
	c := creds{uid: 1000, gid: 1000, groups: []uint32{1000, 27}}
	st := &unix.Stat_t{Uid: 1000, Gid: 1000}
	const same = ^uint32(0)
	assert.True(t, mayChown(c, st, same, 27))
	assert.True(t, mayChown(c, st, 1000, same))
	assert.False(t, mayChown(c, st, 0, same), "giving the file away")
	assert.False(t, mayChown(c, st, same, 4), "a group it is not in")
	assert.False(t, mayChown(c, &unix.Stat_t{Uid: 0}, same, same), "another's file")
}

// The creds of a thread are read from /proc.
func TestCredsOf(t *testing.T) {
	c, ok := credsOf(os.Getpid())
	require.True(t, ok)
	assert.Equal(t, uint32(os.Getuid()), c.uid)
	assert.Equal(t, uint32(os.Getgid()), c.gid)
}
