package corral_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/hosttest"
	"github.com/corralhq/corral/internal/sandboxtest"
)

func TestHelperRunsTheInits(t *testing.T) {
	helper := hosttest.CopySelf(t, "corral-helper")
	for _, tc := range []struct {
		name           string
		viaEnv, direct bool
	}{
		{"Config.Helper", false, false},
		{corral.HelperEnv, true, false},
		{"Config.Helper, DirectSpawn", false, true},
		{corral.HelperEnv + ", DirectSpawn", true, true},
	} {
		viaEnv := tc.viaEnv
		t.Run(tc.name, func(t *testing.T) {
			cfg := corral.Config{Workspace: t.TempDir(), Helper: helper, DirectSpawn: tc.direct}
			if viaEnv {
				cfg.Helper = ""
				t.Setenv(corral.HelperEnv, helper)
			}
			sandboxtest.Require(t, cfg)
			sb, err := corral.New(cfg)
			require.NoError(t, err)
			defer sb.Close()
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer w.Close()
			c := sb.Command(context.Background(), "/bin/cat")
			c.Stdin = r
			require.NoError(t, c.Start())
			r.Close()
			// The init is the helper's file, not this binary.
			exe, err := os.Stat(filepath.Join("/proc", strconv.Itoa(c.Process.Pid), "exe"))
			require.NoError(t, err)
			want, err := os.Stat(helper)
			require.NoError(t, err)
			assert.True(t, os.SameFile(want, exe), "the init runs the helper")
			w.Close()
			require.NoError(t, c.Wait())
		})
	}
}

func TestHelperOfAnotherKindIsASetupError(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "spawner", true: "DirectSpawn"}[direct], func(t *testing.T) {
			cfg := corral.Config{Workspace: t.TempDir(), Helper: "/usr/bin/env", DirectSpawn: direct}
			sandboxtest.Require(t, cfg)
			sb, err := corral.New(cfg)
			if direct {
				// Found by the first command, whose init says no hello.
				require.NoError(t, err)
				defer sb.Close()
				err = sb.Command(context.Background(), "/bin/true").Run()
			}
			var se *corral.SetupError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, corral.LayerInit, se.Layer)
			assert.Contains(t, err.Error(), "not a corral binary")
		})
	}
}

// A Sandbox left unused past its idle timeout keeps no inits; its next
// command still runs, in a sandbox built for it.
func TestIdleSandboxRunsAfterReaping(t *testing.T) {
	cfg := corral.Config{Workspace: t.TempDir(), IdleTimeout: time.Nanosecond}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()
	for range 3 {
		out, err := sb.Command(context.Background(), "/bin/echo", "ok").Output()
		require.NoError(t, err)
		assert.Equal(t, "ok\n", string(out))
	}
}
