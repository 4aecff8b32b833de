package corral

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBindErrors(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	src, _ := filepath.EvalSymlinks(t.TempDir())
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"relative dest", Config{Workspace: ws, WorkspaceDest: "workspace"}, "absolute, clean"},
		{"unclean dest", Config{Workspace: ws, WorkspaceDest: "/a/../workspace"}, "absolute, clean"},
		{"root", Config{Workspace: ws, WorkspaceDest: "/"}, "cannot be a destination"},
		{"tmp", Config{Workspace: ws, Binds: []Bind{{Source: src, Dest: "/tmp"}}}, "cannot be a destination"},
		{"proc", Config{Workspace: ws, Binds: []Bind{{Source: src, Dest: "/proc/x"}}}, "lies in /proc"},
		{"missing source", Config{Workspace: ws, Binds: []Bind{{Source: src + "/nope", Dest: "/agent"}}}, "does not exist"},
		{"dest in the workspace", Config{Workspace: ws, Binds: []Bind{{Source: src, Dest: ws + "/agent"}}}, "overlaps " + ws},
		{"dest holds a configured path", Config{Workspace: ws, Binds: []Bind{{Source: src, Dest: filepath.Dir(ws)}}}, "overlaps"},
		{"two dests nest", Config{Workspace: ws, WorkspaceDest: "/w", Binds: []Bind{{Source: src, Dest: "/w/agent"}}}, "overlaps the destination"},
		{"dest in the persistent home", Config{Workspace: ws, PersistHome: t.TempDir() + "/h",
			Binds: []Bind{{Source: src, Dest: homeDir(t) + "/agent"}}}, "overlaps " + homeDir(t)},
		{"changeset", Config{Workspace: ws, WorkspaceDest: "/w", Changeset: t.TempDir() + "/cs"}, "changeset"},
		{"disabled", Config{Mode: ModeDisabled, WorkspaceDest: "/w"}, "need the sandbox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.cfg.resolve()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestBindPathsTranslate(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	src, _ := filepath.EvalSymlinks(t.TempDir())
	sb := &Sandbox{spec: &spec{Workspace: ws, WorkspaceDest: "/workspace", Binds: []Bind{{Source: src, Dest: "/agent", ReadOnly: true}}}}
	assert.Equal(t, "/workspace", sb.WorkspaceDir())
	assert.Equal(t, "/workspace/a/b", sb.SandboxPath(ws+"/a/b"))
	assert.Equal(t, "/agent", sb.SandboxPath(src))
	assert.Equal(t, "/etc/passwd", sb.SandboxPath("/etc/passwd"))
	assert.Equal(t, ws+"/x", sb.HostPath("/workspace/x"))
	assert.Equal(t, src+"/n.md", sb.HostPath("/agent/n.md"))
	assert.Equal(t, "/workspacex", sb.HostPath("/workspacex"))
}

func TestMountPlanShowsDestinations(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	src, _ := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, os.Mkdir(ws+"/data", 0o755))
	lines, err := Config{Workspace: ws, WorkspaceDest: "/workspace", ReadOnlyPaths: []string{ws + "/data"},
		Binds: []Bind{{Source: src, Dest: "/agent", ReadOnly: true}}}.MountPlan()
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")
	assert.Contains(t, plan, "mountpt  /workspace")
	assert.Contains(t, plan, "bind     /workspace (from "+ws+")")
	assert.Contains(t, plan, "ro-bind  /workspace/data (from "+ws+"/data)")
	assert.Contains(t, plan, "ro-bind  /agent (from "+src+")")
}

func homeDir(t *testing.T) string {
	h, err := os.UserHomeDir()
	require.NoError(t, err)
	h, err = filepath.EvalSymlinks(h)
	require.NoError(t, err)
	return h
}
