package changeset_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/changeset"
)

// otherGroup returns a group the test may give its own files that is not
// its primary group: any as root, else a supplementary one.
func otherGroup(t *testing.T) int {
	t.Helper()
	if os.Geteuid() == 0 {
		return 12345
	}
	groups, err := os.Getgroups()
	require.NoError(t, err)
	for _, g := range groups {
		if g != os.Getgid() {
			return g
		}
	}
	t.Skip("the user has no supplementary group (scripts/test-unprivileged.sh gives corral-test one)")
	return 0
}

// TestSandboxChangesetForeignGroup: files of the user's in another of its
// groups, a file and a directory. As root every group is mapped. An
// unprivileged sandbox maps only the user's own group, and overlayfs alone
// could not copy them up: New copies them up on the host first, so the
// change goes into the changeset, the unchanged copy of the directory is no
// change, and apply keeps the group. The control: a file given the group
// after New was not copied up, and changing it fails with EOVERFLOW, as
// every such file did before. A file of the user's own group changes
// either way. Apply keeps a modified file's group (and, as root, owner).
func TestSandboxChangesetForeignGroup(t *testing.T) {
	ws := workspace(t)
	g := otherGroup(t)
	require.NoError(t, os.Chown(filepath.Join(ws, "a.txt"), -1, g))
	require.NoError(t, os.Chown(filepath.Join(ws, "e"), -1, g))
	require.NoError(t, os.Chmod(filepath.Join(ws, "e"), 0o750))
	dir := filepath.Join(t.TempDir(), "cs")
	sb := sandbox(t, corral.Config{Workspace: ws, Changeset: dir})
	require.NoError(t, os.Chown(filepath.Join(ws, "d/y"), -1, g))

	out, err := sb.Command(context.Background(), "sh", "-c", "echo more >> d/x").CombinedOutput()
	require.NoError(t, err, "control: a file of the user's own group changes: %s", out)
	out, err = sb.Command(context.Background(), "sh", "-c", "echo more >> a.txt && echo n > e/new").CombinedOutput()
	require.NoError(t, err, "a file and a directory of another of the user's groups change: %s", out)
	late, lateErr := sb.Command(context.Background(), "sh", "-c", "echo more >> d/y").CombinedOutput()

	cs, oerr := changeset.Open(dir)
	require.NoError(t, oerr)
	changes, lerr := cs.List()
	require.NoError(t, lerr)
	if os.Geteuid() == 0 {
		require.NoError(t, lateErr, "root maps every group: %s", late)
		// And every owner: a file of another user, writable by all,
		// changes too.
		require.NoError(t, os.Chown(filepath.Join(ws, "d/y"), 12345, -1))
		require.NoError(t, os.Chmod(filepath.Join(ws, "d/y"), 0o666))
		out, err = sb.Command(context.Background(), "sh", "-c", "echo more >> d/y").CombinedOutput()
		require.NoError(t, err, "root maps every owner: %s", out)
		changes, lerr = cs.List()
		require.NoError(t, lerr)
		assert.Equal(t, []string{"M a.txt", "M d/x", "M d/y", "A e/new"}, summaries(changes))
	} else {
		require.Error(t, lateErr, "a file given the group after New was not copied up")
		assert.Contains(t, string(late), "Value too large")
		assert.Equal(t, []string{"M a.txt", "M d/x", "A e/new"}, summaries(changes))
	}

	own := uint32(os.Getgid())
	found, _, err := cs.UnmappedGroups(uint32(os.Getuid()), func(gid uint32) bool { return gid == own }, 10)
	require.NoError(t, err)
	for _, u := range found {
		assert.Equal(t, "d/y", u.Path, "only the file given the group late still needs a copy")
	}

	_, err = cs.Apply(changeset.ApplyOptions{Force: true}) // d/y changed on the host meanwhile
	require.NoError(t, err)
	for _, name := range []string{"a.txt", "e", "e/new"} {
		fi, err := os.Stat(filepath.Join(ws, name))
		require.NoError(t, err)
		if name != "e/new" {
			assert.Equal(t, uint32(g), fi.Sys().(*syscall.Stat_t).Gid, "%s keeps its group", name)
		}
	}
	if os.Geteuid() == 0 {
		fi, err := os.Stat(filepath.Join(ws, "d/y"))
		require.NoError(t, err)
		assert.Equal(t, uint32(12345), fi.Sys().(*syscall.Stat_t).Uid, "as root, a modified file keeps its owner")
	}
	got, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\nmore\n", string(got))
}
