package changeset_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/changeset"
)

// deepScript nests 3000 directories of 3-character names, a path of
// 12,000 bytes, three times PATH_MAX, one name at a time, and leaves a file
// at the bottom. perl, not sh: a shell looks up its working directory
// after every cd, which costs the square of the depth.
const deepScript = `for (1..3000) { mkdir "abc" or die "mkdir: $!"; chdir "abc" or die "chdir: $!" }
open(F, ">", "f") or die "open: $!"; print F "deep\n"; close F or die`

// TestSandboxChangesetDeepTree: a command cannot make its changes
// impossible to review or apply by nesting directories past PATH_MAX.
func TestSandboxChangesetDeepTree(t *testing.T) {
	ws := workspace(t)
	dir := filepath.Join(t.TempDir(), "cs")
	perl(t, sandbox(t, corral.Config{Workspace: ws, Changeset: dir}), deepScript)

	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	long := filepath.Join(cs.Roots()[0].Upper, strings.Repeat("abc/", 3000)+"f")
	_, err = os.Lstat(long)
	require.ErrorIs(t, err, unix.ENAMETOOLONG, "control: the path is too long for a system call")

	changes, err := cs.List()
	require.NoError(t, err)
	require.Len(t, changes, 3001)
	assert.Equal(t, "A "+strings.Repeat("abc/", 3000)+"f", changes[3000].String())

	var diff bytes.Buffer
	require.NoError(t, cs.Diff(&diff))
	assert.Contains(t, diff.String(), "+deep\n")

	var archive bytes.Buffer
	require.NoError(t, cs.Export(&archive))
	elsewhere := t.TempDir()
	imported, err := changeset.Import(filepath.Join(t.TempDir(), "imported"), elsewhere, &archive, changeset.ImportOptions{})
	require.NoError(t, err)
	got, err := imported.List()
	require.NoError(t, err)
	assert.Len(t, got, 3001)
	require.NoError(t, imported.Discard())

	_, err = cs.Apply(changeset.ApplyOptions{})
	require.NoError(t, err)
	out := perl(t, sandbox(t, corral.Config{Workspace: ws}),
		`for (1..3000) { chdir "abc" or die "chdir: $!" } open(F, "<", "f") or die "open: $!"; print <F>`)
	assert.Equal(t, "deep\n", out, "applied to the workspace")
	require.NoError(t, cs.Discard())
}

func perl(t *testing.T, sb *corral.Sandbox, script string) string {
	t.Helper()
	out, err := sb.Command(context.Background(), "perl", "-e", script).CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}
