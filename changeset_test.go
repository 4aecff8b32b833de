package corral

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolvedChangeset(t *testing.T) {
	ws := t.TempDir()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(base, link))

	r, err := Config{Workspace: ws, Changeset: filepath.Join(link, "cs")}.Resolved()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(link, "cs"), r.Changeset, "a missing directory is left as given, absolute")
	_, err = os.Stat(filepath.Join(base, "cs"))
	assert.ErrorIs(t, err, os.ErrNotExist, "Resolved creates nothing")

	r, err = Config{Workspace: ws, Changeset: link}.Resolved()
	require.NoError(t, err)
	assert.Equal(t, base, r.Changeset, "an existing one is canonical")

	_, err = Config{Workspace: ws, Changeset: filepath.Join(ws, "cs")}.Resolved()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Changeset", ce.Field)
}
