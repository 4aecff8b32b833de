package corral

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNoWorkspaceConfig(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		c    Config
		err  string
	}{
		{"a workspace too", Config{NoWorkspace: true, Workspace: dir}, "Workspace"},
		{"a destination", Config{NoWorkspace: true, WorkspaceDest: "/workspace"}, "WorkspaceDest"},
		{"a changeset", Config{NoWorkspace: true, Changeset: dir + "/cs"}, "a changeset overlays the workspace first"},
		{"disabled", Config{NoWorkspace: true, Mode: ModeDisabled}, "Mode disables the sandbox"},
		{"neither", Config{}, "Workspace: required (or NoWorkspace)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.resolve()
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
	s, err := Config{NoWorkspace: true, WritablePaths: []string{dir}}.resolve()
	require.NoError(t, err)
	assert.Empty(t, s.Workspace)
	assert.Equal(t, "/tmp", s.sandboxWorkspace())
	in := mountInput(s, nil)
	assert.Equal(t, []string{dir}, in.Writable, "no workspace among the writable roots")
}
