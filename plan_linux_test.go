package corral

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/ladder"
	"github.com/corralhq/corral/mounts"
)

// TestMountPlanIsTheBackendsPlan: MountPlan prints the very mounts the
// Linux backend builds, from the same resolved config, policy files,
// default-hidden stores and all.
func TestMountPlanIsTheBackendsPlan(t *testing.T) {
	ws := t.TempDir()
	extra, ro := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), nil, 0o600))
	policy := filepath.Join(t.TempDir(), "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte("{}"), 0o600))
	cfg := Config{
		Workspace: ws, WritablePaths: []string{extra}, ReadOnlyPaths: []string{ro},
		HiddenPaths: []string{filepath.Join(ws, ".env")}, PolicyFiles: []string{policy},
		AllowPlanting: []string{".vscode"},
	}
	s, err := cfg.resolve()
	require.NoError(t, err)
	o, err := jailOptions(s, &ladder.Plan{Rung: RungFull}, nil)
	require.NoError(t, err)
	var want []string
	for _, m := range mounts.Build(o.Input()).Mounts {
		want = append(want, m.String())
	}
	got, err := cfg.MountPlan()
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Contains(t, got, "ro-bind  "+policy+" (mount point created)", "the policy file is kept read-only")
	assert.Equal(t, mountInput(s, nil), o.Input(), "the jail's input is mountInput's")
}
