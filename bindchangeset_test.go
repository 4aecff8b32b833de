package corral

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBindChangesetErrors(t *testing.T) {
	dir := func() string { d, _ := filepath.EvalSymlinks(t.TempDir()); return d }
	ws, src, other := dir(), dir(), dir()
	cs := filepath.Join(dir(), "cs")
	file := filepath.Join(other, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no changeset", Config{Workspace: ws, Binds: []Bind{{Source: src, Dest: "/data", Changeset: true}}}, "has no Changeset"},
		{"read-only", Config{Workspace: ws, Changeset: cs, Binds: []Bind{{Source: src, Dest: "/data", ReadOnly: true, Changeset: true}}}, "is read-only"},
		{"a file", Config{Workspace: ws, Changeset: cs, Binds: []Bind{{Source: file, Dest: "/data", Changeset: true}}}, "not a directory"},
		{"in the workspace", Config{Workspace: ws, Changeset: cs, Binds: []Bind{{Source: ws, Dest: "/data", Changeset: true}}}, "overlaps " + ws},
		{"two nest", Config{Workspace: ws, Changeset: cs, Binds: []Bind{{Source: other, Dest: "/a", Changeset: true}, {Source: other, Dest: "/b", Changeset: true}}}, "overlaps " + other},
		{"changeset inside the source", Config{Workspace: ws, Changeset: filepath.Join(src, "cs"), Binds: []Bind{{Source: src, Dest: "/data"}}}, "lies inside the writable path " + src},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.cfg.Resolved()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestMountPlanOverlayDestination(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	src, _ := filepath.EvalSymlinks(t.TempDir())
	cs := filepath.Join(t.TempDir(), "cs")
	lines, err := Config{Workspace: ws, Changeset: cs, HiddenPaths: []string{src},
		Binds: []Bind{{Source: src, Dest: "/data", Changeset: true}}}.MountPlan()
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")
	assert.Contains(t, plan, "mountpt  /data")
	assert.Contains(t, plan, "overlay  /data (changes in "+cs+"/roots/1/upper) (from "+src+")")
	assert.Contains(t, plan, "overlay  "+ws+" (changes in "+cs+"/roots/0/upper)")
}
