package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/hosttest"
	"github.com/corralhq/corral/internal/testhook"
)

// plantRoutes write a hook into a repository nested in the workspace and
// a folder-open task into a new .vscode: code the host's git and editor
// run later.
const plantRoutes = `echo 'touch /tmp/planted' > sub/.git/hooks/pre-commit && mkdir .vscode && echo '{}' > .vscode/tasks.json`

var plantedFiles = []string{"sub/.git/hooks/pre-commit", ".vscode/tasks.json"}

// plantScene is a workspace with a nested git directory.
func plantScene(t *testing.T) string {
	ws := layDir(t)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub", ".git", "hooks"), 0o755))
	return ws
}

// landed are the planted files that reached the host's workspace.
func landed(ws string) []string {
	var out []string
	for _, f := range plantedFiles {
		if _, err := os.Lstat(filepath.Join(ws, f)); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// TestPlantingGuardLandlockRung: the guard of protected names is made of
// mounts (a staged .git, read-only binds, entries held at exit), and the
// landlock rung has no mount namespace. It cannot guard, so it runs only
// when the configuration says to run with what is missing (FallbackWarn),
// and names the missing guard then: the warning, Doctor's Without. The
// routes it names are real: planted there, a nested repository's hook and
// a new .vscode reach the host, as they do unsandboxed (the control),
// while the full rung keeps both from it.
func TestPlantingGuardLandlockRung(t *testing.T) {
	t.Run("unsandboxed", func(t *testing.T) {
		ws := plantScene(t)
		c := exec.Command("sh", "-c", plantRoutes)
		c.Dir = ws
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, plantedFiles, landed(ws), "the probe plants both")
	})
	t.Run("full", func(t *testing.T) {
		ws := plantScene(t)
		sb, logs := rungSandbox(t, corral.RungFull, corral.Config{Workspace: ws})
		out, err := sb.Command(t.Context(), "sh", "-c", plantRoutes).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Empty(t, landed(ws), "staged and held")
		assert.Empty(t, *logs, "nothing is missing")
	})
	t.Run("landlock", func(t *testing.T) {
		ws := plantScene(t)
		sb, logs := rungSandbox(t, corral.RungLandlock, corral.Config{Workspace: ws})
		require.Len(t, *logs, 1, "the rung is announced once")
		assert.Contains(t, (*logs)[0], "; protect (no mount namespace: git directories are not staged")
		out, err := sb.Command(t.Context(), "sh", "-c", plantRoutes).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, plantedFiles, landed(ws), "what the warning names is what happens")
	})
	t.Run("landlock, every name allowed", func(t *testing.T) {
		ws := plantScene(t)
		_, logs := rungSandbox(t, corral.RungLandlock, corral.Config{Workspace: ws, AllowPlanting: corral.ProtectedNames()})
		require.Len(t, *logs, 1)
		assert.NotContains(t, (*logs)[0], "protect", "nothing to guard, nothing missing")
	})
	t.Run("doctor", func(t *testing.T) {
		defer testhook.Disable(corral.LayerUserNS)()
		r, err := corral.Doctor(corral.Config{Fallback: corral.FallbackWarn})
		require.NoError(t, err)
		if r.Rung != corral.RungLandlock {
			hosttest.Skipf(t, "this host cannot give the landlock rung: %s", layMissing(r))
		}
		assert.Contains(t, r.Without, string(corral.LayerProtect))
		r, err = corral.Doctor(corral.Config{Fallback: corral.FallbackWarn, AllowPlanting: corral.ProtectedNames()})
		require.NoError(t, err)
		assert.NotContains(t, r.Without, string(corral.LayerProtect))
		r, err = corral.Doctor(corral.Config{})
		require.NoError(t, err)
		assert.False(t, r.OK, "by default a host without the full rung runs nothing")
		assert.True(t, strings.HasPrefix(r.Problem, string(corral.LayerUserNS)), "%s", r.Problem)
	})
}
