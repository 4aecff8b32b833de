package config

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// examplePath finds examples/corral.toml from this source file, so the test
// also passes when its binary runs elsewhere (as the unprivileged run does).
func examplePath(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "examples", "corral.toml")
}

// TestExampleFile keeps examples/corral.toml valid and saying what its
// comments claim.
func TestExampleFile(t *testing.T) {
	cfg, err := Load(examplePath(t))
	require.NoError(t, err)
	require.Equal(t, []string{"coder", "reviewer", "researcher"}, cfg.IDs())

	coder, _ := cfg.Agent("coder")
	assert.Equal(t, runtimeDefaults(Sandbox{
		Mode:          corral.ModeEnabled,
		Network:       corral.NetworkHost,
		Fallback:      FallbackFail,
		Env:           []string{"GOPATH", "GOFLAGS=-mod=mod"},
		AllowPlanting: []string{".envrc"},
		Limits:        corral.Limits{TmpSize: 512 << 20},
		ConfigFile:    cfg.File,
	}), coder.Sandbox)

	reviewer, _ := cfg.Agent("reviewer")
	assert.Equal(t, runtimeDefaults(Sandbox{
		Mode:       corral.ModeEnabled,
		Network:    corral.NetworkNone,
		Fallback:   FallbackFail,
		Env:        []string{"CI=1"},
		ConfigFile: cfg.File,
	}), reviewer.Sandbox)
	assert.Equal(t, []string{cfg.File}, reviewer.Sandbox.CorralConfig().PolicyFiles, "the file is kept read-only in its sandboxes")

	researcher, _ := cfg.Agent("researcher")
	assert.Equal(t, corral.NetworkAllow, researcher.Sandbox.Network)
	assert.Equal(t, []string{"github.com", "*.githubusercontent.com", "pypi.org", "files.pythonhosted.org", "api.example.com:443"},
		researcher.Sandbox.AllowedDomains)
	assert.Equal(t, []string{"gist.githubusercontent.com"}, researcher.Sandbox.DeniedDomains)
	lib := researcher.Sandbox.CorralConfig()
	assert.Equal(t, researcher.Sandbox.AllowedDomains, lib.AllowedDomains)
	assert.Equal(t, researcher.Sandbox.DeniedDomains, lib.DeniedDomains)
}

// TestExampleFileCommentedKeys checks the keys shown commented out, which a
// reader will uncomment first.
func TestExampleFileCommentedKeys(t *testing.T) {
	path := examplePath(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	commented := regexp.MustCompile(`(?m)^# ([a-z_]+ = )`)
	require.Len(t, commented.FindAll(data, -1), 21, "the commented keys this test knows")
	assert.NotRegexp(t, `(?m)^#? ?mode = "(enabled|disabled)"`, string(data), "today's values, not the older names")
	doc := commented.ReplaceAllString(string(data), "$1")

	cfg, err := Parse(strings.NewReader(doc), path)
	require.NoError(t, err)
	coder, _ := cfg.Agent("coder")
	assert.Equal(t, "/srv/agents/coder/workspace", coder.Sandbox.Workspace)
	assert.Equal(t, AccessRW, coder.Sandbox.WorkspaceAccess)
	assert.Equal(t, []string{"/srv/cache/go-build", "/srv/agents/coder/notes"}, coder.Sandbox.WritablePaths)
	assert.Equal(t, []string{"/srv/agents/coder/data"}, coder.Sandbox.ReadOnlyPaths)
	assert.Equal(t, []string{"/home/me/.ssh"}, coder.Sandbox.HiddenPaths)
	assert.Equal(t, []string{"/home/me/.aws"}, coder.Sandbox.Reveal)
	assert.True(t, coder.Sandbox.AllowHome)
	assert.True(t, coder.Sandbox.AllowUnixSockets)
	assert.True(t, coder.Sandbox.AllowPtrace)
	assert.Equal(t, "/srv/agents/coder/changes", coder.Sandbox.Changeset)
	assert.Equal(t, []string{"/srv/agents/coder/notes"}, coder.Sandbox.ChangesetPaths)
	researcher, _ := cfg.Agent("researcher")
	assert.Equal(t, []string{"10.20.0.0/16"}, researcher.Sandbox.AllowedIPs)
	assert.Equal(t, 64, researcher.Sandbox.ProxyConnections)
	assert.Equal(t, []int{11434}, researcher.Sandbox.HostPorts)
	assert.Equal(t, []string{"8080:3000"}, researcher.Sandbox.Publish)
	assert.Equal(t, corral.Limits{Memory: 4 << 30, Pids: 1024, CPUs: 2, TmpSize: 512 << 20, FileSize: 8 << 30,
		OpenFiles: 4096, CPUTime: 30 * time.Minute}, coder.Sandbox.Limits)
}
