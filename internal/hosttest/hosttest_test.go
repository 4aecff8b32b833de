package hosttest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSkip(t *testing.T) {
	if os.Getenv("HOSTTEST_CHILD") == "1" {
		Skip(t, "the host lacks it")
		return
	}
	for _, tc := range []struct {
		require string
		fails   bool
	}{{"", false}, {"0", false}, {"1", true}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSkip$", "-test.v")
		cmd.Env = append(os.Environ(), "HOSTTEST_CHILD=1", RequireEnv+"="+tc.require)
		out, err := cmd.CombinedOutput()
		if tc.fails {
			assert.Error(t, err, "%s", out)
			assert.Contains(t, string(out), "the host lacks it ("+RequireEnv+"=1")
		} else {
			assert.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), "SKIP")
		}
	}
}
