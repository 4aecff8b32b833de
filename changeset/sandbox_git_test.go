package changeset_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/changeset"
)

// TestSandboxChangesetGitCommitApplies: ordinary git work done in a
// changeset lands on apply, through the allowlisted merge of the git
// directory, and what the command tried to plant in it does not.
func TestSandboxChangesetGitCommitApplies(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws := filepath.Join(t.TempDir(), "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644))
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+ws)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "first")

	dir := filepath.Join(t.TempDir(), "cs")
	sb := sandbox(t, corral.Config{Workspace: ws, Changeset: dir})
	run(t, sb, "echo b > b.txt && git add b.txt && git -c user.name=t -c user.email=t@example.com commit -q -m second")

	cs, err := changeset.Open(dir)
	require.NoError(t, err)
	res, err := cs.Apply(changeset.ApplyOptions{})
	require.NoError(t, err)
	assert.Empty(t, res.Held)
	assert.Empty(t, res.Dropped)
	assert.NotEmpty(t, res.Guarded, "the git directory's changes went through the guard")
	assert.Equal(t, []string{"second", "first"}, strings.Fields(git("log", "--format=%s")))
	assert.Empty(t, git("status", "--porcelain"))
}
