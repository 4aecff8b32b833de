package corral

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolved(t *testing.T) {
	real, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(real, link))
	require.NoError(t, os.Mkdir(filepath.Join(real, "secret"), 0o700))
	r, err := Config{
		Workspace:     link,
		WritablePaths: []string{real, link},
		HiddenPaths:   []string{filepath.Join(link, "secret")},
		AllowPlanting: []string{".envrc"},
	}.Resolved()
	require.NoError(t, err)
	assert.Equal(t, real, r.Workspace)
	assert.Equal(t, []string{real}, r.WritablePaths, "duplicates after resolving are dropped")
	assert.Equal(t, []string{filepath.Join(real, "secret")}, r.HiddenPaths)
	assert.Equal(t, ModeEnabled, r.Mode)
	assert.Equal(t, NetworkHost, r.Network)
	assert.Equal(t, []string{".envrc"}, r.AllowPlanting)
}

func TestResolvedRejectsBadConfig(t *testing.T) {
	_, err := Config{Workspace: filepath.Join(t.TempDir(), "missing")}.Resolved()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Workspace", ce.Field)
}

func TestProtectedNames(t *testing.T) {
	all := protectedNames(nil, nil)
	assert.Equal(t, ProtectedNames(), all)
	some := protectedNames([]string{".git"}, nil)
	assert.NotContains(t, some, ".git")
	assert.Len(t, some, len(ProtectedNames())-1)
	more := protectedNames([]string{".git"}, []string{"tools/hooks", "nbstripout.py"})
	assert.Equal(t, append(some, "tools/hooks", "nbstripout.py"), more)
}

// Protect adds names the list lacks (a listed one is listed already) and
// Resolved and Protected show them.
func TestProtectResolved(t *testing.T) {
	ws := t.TempDir()
	c := Config{Workspace: ws, Protect: []string{"tools/hooks", ".envrc", "x.code-workspace", "tools/hooks"}}
	r, err := c.Resolved()
	require.NoError(t, err)
	assert.Equal(t, []string{"tools/hooks", "x.code-workspace"}, r.Protect)
	assert.Equal(t, append(ProtectedNames(), "tools/hooks", "x.code-workspace"), r.Protected())
	assert.Equal(t, r.Protected(), mountInput(mustResolve(t, c), nil).Protected, "the names reach the mount input")
}

func mustResolve(t *testing.T, c Config) *spec {
	s, err := c.resolve()
	require.NoError(t, err)
	return s
}
