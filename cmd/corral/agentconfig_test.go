package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

const twoAgents = `[[agents]]
id = "coder"
[agents.sandbox]
workspace = "ws"
writable_paths = ["/file/w"]
read_only_paths = ["/file/r"]
hidden_paths = ["/file/h"]
network = "none"
env = ["FROM_FILE=1"]
allow_planting = [".git/hooks"]

[[agents]]
id = "plain"
`

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agents.toml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// flagConfig parses args as `corral run` flags and builds the Config.
func flagConfig(t *testing.T, args ...string) (corral.Config, error) {
	t.Helper()
	var f runFlags
	cmd := &cobra.Command{Use: "run"}
	f.register(cmd)
	require.NoError(t, cmd.ParseFlags(args))
	return f.config()
}

func TestConfigFileMerge(t *testing.T) {
	path := writeConfig(t, twoAgents)
	dir := filepath.Dir(path)
	wd, err := os.Getwd()
	require.NoError(t, err)
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c corral.Config)
	}{
		{"file alone", []string{"--config", path, "--agent", "coder"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, corral.ModeEnabled, c.Mode)
			assert.Equal(t, filepath.Join(dir, "ws"), c.Workspace)
			assert.Equal(t, []string{"/file/w"}, c.WritablePaths)
			assert.Equal(t, []string{"/file/r"}, c.ReadOnlyPaths)
			assert.Equal(t, []string{"/file/h"}, c.HiddenPaths)
			assert.Equal(t, corral.NetworkNone, c.Network)
			assert.Equal(t, []string{"FROM_FILE=1"}, c.Env)
			assert.Equal(t, []string{".git/hooks"}, c.AllowPlanting)
			assert.True(t, c.DirectSpawn, "settings the file cannot hold come from the command line")
			assert.NotNil(t, c.Logf)
		}},
		{"workspace flag wins", []string{"--config", path, "--agent", "coder", "--workspace", "/flag/ws"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, "/flag/ws", c.Workspace)
		}},
		{"net flag wins", []string{"--config", path, "--agent", "coder", "--net", "host"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, corral.NetworkHost, c.Network)
		}},
		{"lists add up", []string{"--config", path, "--agent", "coder", "--writable", "/flag/w", "--read-only", "/flag/r",
			"--hide", "/flag/h", "--env", "FROM_FILE=2"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, []string{"/file/w", "/flag/w"}, c.WritablePaths)
			assert.Equal(t, []string{"/file/r", "/flag/r"}, c.ReadOnlyPaths)
			assert.Equal(t, []string{"/file/h", "/flag/h"}, c.HiddenPaths)
			assert.Equal(t, []string{"FROM_FILE=1", "FROM_FILE=2"}, c.Env, "the flag comes last, so its value wins")
		}},
		{"defaults of a bare agent", []string{"--config", path, "--agent", "plain"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, wd, c.Workspace, "no workspace in the file: the current directory")
			assert.Equal(t, corral.NetworkHost, c.Network)
			assert.Empty(t, c.WritablePaths)
		}},
		{"no config file", []string{"--net", "none", "--writable", "/flag/w"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, wd, c.Workspace)
			assert.Equal(t, corral.NetworkNone, c.Network)
			assert.Equal(t, []string{"/flag/w"}, c.WritablePaths)
			assert.Empty(t, c.Mode)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := flagConfig(t, tt.args...)
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

func TestConfigFileSingleAgent(t *testing.T) {
	path := writeConfig(t, "[[agents]]\nid = \"only\"\n[agents.sandbox]\nmode = \"disabled\"\n")
	c, err := flagConfig(t, "--config", path)
	require.NoError(t, err)
	assert.Equal(t, corral.ModeDisabled, c.Mode)
}

func TestConfigFileErrors(t *testing.T) {
	good := writeConfig(t, twoAgents)
	bad := writeConfig(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \"wifi\"\n")
	missing := filepath.Join(t.TempDir(), "missing.toml")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"agent without config", []string{"--agent", "coder"}, "--agent needs --config"},
		{"missing file", []string{"--config", missing}, "load config: open " + missing + ": no such file or directory"},
		{"bad file", []string{"--config", bad}, bad + `:4: agents[0].sandbox.network: "wifi" is not a network; want "host" or "none"`},
		{"unknown agent", []string{"--config", good, "--agent", "nobody"}, good + `: no agent "nobody"; the file defines coder, plain`},
		{"several agents", []string{"--config", good}, good + " defines 2 agents (coder, plain); choose one with --agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := flagConfig(t, tt.args...)
			var ee *exitError
			require.True(t, errors.As(err, &ee), "got %v", err)
			assert.Equal(t, exitUsage, ee.code)
			assert.Equal(t, tt.want, ee.msg)
		})
	}
}

// TestRunConfigExitStatus goes through the whole CLI; every case fails
// before a sandbox would be started.
func TestRunConfigExitStatus(t *testing.T) {
	bad := writeConfig(t, "[[agents]]\nid = \"a\"\nsandbox.mode = \"maybe\"\n")
	unusable := writeConfig(t, "[[agents]]\nid = \"a\"\nsandbox.workspace = \"does-not-exist\"\n")
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"bad file", []string{"run", "--config", bad, "--", "true"}, exitUsage},
		{"unknown agent", []string{"run", "--config", unusable, "--agent", "x", "--", "true"}, exitUsage},
		{"agent without config", []string{"run", "--agent", "x", "--", "true"}, exitUsage},
		{"valid file, unusable workspace", []string{"run", "--config", unusable, "--", "true"}, exitSetup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var code int
			stderr := captureStderr(t, func() { code = run(tt.args) })
			assert.Equal(t, tt.want, code)
			assert.Regexp(t, `^corral: [^\n]+\n$`, stderr, "one line naming the problem")
		})
	}
}

// captureStderr returns what fn writes to os.Stderr; it must be little
// enough to fit in a pipe.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	saved := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = saved }()
	fn()
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return string(out)
}
