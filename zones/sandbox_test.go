package zones

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

func TestSandboxConfig(t *testing.T) {
	var zs []Zone
	for _, z := range project() {
		z.Path = filepath.Join(t.TempDir(), z.Name)
		require.NoError(t, os.Mkdir(z.Path, 0o755))
		zs = append(zs, z)
	}
	path := func(name string) string { z, _ := Project(zs).Zone(name); return z.Path }
	a, err := Resolve(zs, []Decl{{Name: "data", Mode: ReadWrite}, {Name: "drafts", Mode: ReadWrite}, {Name: "final", Mode: ReadWrite}, {Name: "input"}})
	require.NoError(t, err)
	base := corral.Config{Workspace: "/w", HiddenPaths: []string{"/keys"}}
	c, err := a.SandboxConfig(base, zs, "/cs")
	require.NoError(t, err)
	assert.Equal(t, []corral.Bind{
		{Source: path("data"), Dest: "/data", Changeset: true},   // ask
		{Source: path("drafts"), Dest: "/drafts"},                // preApproved: direct
		{Source: path("final"), Dest: "/final", Changeset: true}, // ask, delete blocked
		{Source: path("input"), Dest: "/input", ReadOnly: true},
	}, c.Binds)
	assert.Equal(t, "/cs", c.Changeset)
	assert.ElementsMatch(t, []string{"/keys", path("data"), path("input"), path("drafts"), path("final")}, c.HiddenPaths,
		"every zone is hidden at its host path")
	assert.Equal(t, []string{"/keys"}, base.HiddenPaths, "base is not changed")

	_, err = a.SandboxConfig(base, zs, "")
	require.EqualError(t, err, "/data: its changes need review, which commands' writes get through a changeset: name a changeset directory")

	blocked, err := Resolve(zs, []Decl{{Name: "data", Mode: ReadWrite, Approval: Approval{Write: Blocked}}})
	require.NoError(t, err)
	c, err = blocked.SandboxConfig(base, zs, "")
	require.NoError(t, err)
	assert.Equal(t, []corral.Bind{{Source: path("data"), Dest: "/data", ReadOnly: true}}, c.Binds, "write blocked: read-only")
	assert.Empty(t, c.Changeset)

	// A zone not made yet cannot be hidden; MakeZones makes it.
	late := Zone{Name: "late", Path: filepath.Join(t.TempDir(), "not", "yet"), Mode: ReadWrite}
	c, err = blocked.SandboxConfig(base, append(zs, late), "")
	require.NoError(t, err)
	assert.NoDirExists(t, late.Path, "SandboxConfig creates nothing")
	require.NoError(t, MakeZones(append(zs, late)))
	assert.DirExists(t, late.Path)
	c, err = blocked.SandboxConfig(base, append(zs, late), "")
	require.NoError(t, err)
	assert.Contains(t, c.HiddenPaths, late.Path)

	// A pure worker: no zone and no workspace; its scratch directory is
	// hidden where it lies.
	pure, err := Resolve(zs, nil)
	require.NoError(t, err)
	scratch := t.TempDir()
	c, err = pure.SandboxConfig(corral.Config{Workspace: scratch, WorkspaceDest: "/workspace", Changeset: "/cs"}, zs, "/cs")
	require.NoError(t, err)
	assert.Empty(t, c.Binds)
	assert.True(t, c.NoWorkspace)
	assert.Empty(t, c.Workspace)
	assert.Empty(t, c.WorkspaceDest)
	assert.Empty(t, c.Changeset)
	assert.ElementsMatch(t, []string{path("data"), path("input"), path("drafts"), path("final"), scratch}, c.HiddenPaths)
}
