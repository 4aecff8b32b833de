package cli

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// TestRunLandlockRungNamesTheMissingGuard: without user namespaces `corral
// run` refuses by default; with --fallback warn it runs on the landlock
// rung, whose one line names the guard of protected names it goes without.
func TestRunLandlockRungNamesTheMissingGuard(t *testing.T) {
	needsRung(t, corral.RungLandlock, string(corral.LayerUserNS))
	run := func(args ...string) (string, int) {
		c := exec.Command(os.Args[0], append([]string{"run"}, args...)...)
		c.Env = append(os.Environ(), cliEnv+"=1", cliDisableEnv+"="+string(corral.LayerUserNS))
		c.Dir = workspace(t)
		out, err := c.CombinedOutput()
		var ee *exec.ExitError
		if err != nil {
			require.ErrorAs(t, err, &ee, "%s", out)
		}
		return string(out), c.ProcessState.ExitCode()
	}
	out, code := run("--", "true")
	assert.Equal(t, 125, code, "%s", out)
	assert.Contains(t, out, "user namespace: unavailable", "by default nothing runs below the full rung")

	out, code = run("--fallback", "warn", "--", "true")
	assert.Equal(t, 0, code, "%s", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 1, "%s", out)
	assert.Contains(t, lines[0], "corral: sandbox runs on rung landlock, without user namespace")
	assert.Contains(t, lines[0], "; protect (no mount namespace: git directories are not staged")
}
