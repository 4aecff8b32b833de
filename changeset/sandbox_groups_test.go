package changeset_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// TestSandboxChangesetForeignGroup: a file of the user's in another of its
// groups. As root every group is mapped and the change goes into the
// changeset. Unprivileged, only the user's own group can be mapped:
// overlayfs cannot copy the file up, and UnmappedGroups names it so that
// the CLI can say so before the command runs; a file of the user's own
// group, the control, changes either way.
func TestSandboxChangesetForeignGroup(t *testing.T) {
	ws := workspace(t)
	g := otherGroup(t)
	require.NoError(t, os.Chown(filepath.Join(ws, "a.txt"), -1, g))
	dir := filepath.Join(t.TempDir(), "cs")
	sb := sandbox(t, corral.Config{Workspace: ws, Changeset: dir})

	out, err := sb.Command(context.Background(), "sh", "-c", "echo more >> d/x").CombinedOutput()
	require.NoError(t, err, "control: a file of the user's own group changes: %s", out)
	out, err = sb.Command(context.Background(), "sh", "-c", "echo more >> a.txt").CombinedOutput()

	cs, oerr := changeset.Open(dir)
	require.NoError(t, oerr)
	changes, lerr := cs.List()
	require.NoError(t, lerr)
	if os.Geteuid() == 0 {
		require.NoError(t, err, "root maps every group: %s", out)
		// And every owner: a file of another user, writable by all,
		// changes too.
		require.NoError(t, os.Chown(filepath.Join(ws, "d/y"), 12345, -1))
		require.NoError(t, os.Chmod(filepath.Join(ws, "d/y"), 0o666))
		out, err = sb.Command(context.Background(), "sh", "-c", "echo more >> d/y").CombinedOutput()
		require.NoError(t, err, "root maps every owner: %s", out)
		changes, lerr = cs.List()
		require.NoError(t, lerr)
		assert.Equal(t, []string{"M a.txt", "M d/x", "M d/y"}, summaries(changes))
	} else {
		require.Error(t, err)
		assert.Contains(t, string(out), "Value too large")
		assert.Equal(t, []string{"M d/x"}, summaries(changes))
	}

	own := uint32(os.Getgid())
	found, total, err := cs.UnmappedGroups(uint32(os.Getuid()), func(gid uint32) bool { return gid == own }, 10)
	require.NoError(t, err)
	paths := make([]string, len(found))
	for i, u := range found {
		paths[i] = u.Path
		assert.Equal(t, uint32(g), u.GID)
	}
	if os.Geteuid() == 0 {
		// Copied up: it needs no copy-up any more.
		assert.Empty(t, paths)
	} else {
		assert.True(t, slices.Contains(paths, "a.txt"), "%v", paths)
		assert.Equal(t, 1, total)
	}
}
