package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
allow_planting = [".git"]
protect = ["tools/hooks"]
allow_unix_sockets = true
allow_ptrace = true
changeset = "changes"
changeset_paths = ["/file/w"]

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
			assert.Equal(t, []string{".git"}, c.AllowPlanting)
			assert.Equal(t, []string{"tools/hooks"}, c.Protect)
			assert.True(t, c.AllowUnixSockets)
			assert.True(t, c.AllowPtrace)
			assert.Equal(t, filepath.Join(dir, "changes"), c.Changeset)
			assert.Equal(t, []string{"/file/w"}, c.ChangesetPaths)
			assert.True(t, c.DirectSpawn, "settings the file cannot hold come from the command line")
			assert.NotNil(t, c.Logf)
		}},
		{"workspace flag wins", []string{"--config", path, "--agent", "coder", "--workspace", "/flag/ws"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, "/flag/ws", c.Workspace)
		}},
		{"net flag wins", []string{"--config", path, "--agent", "coder", "--net", "host"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, corral.NetworkHost, c.Network)
		}},
		{"changeset and socket flags win", []string{"--config", path, "--agent", "coder", "--changeset", "/flag/cs", "--allow-unix-sockets=false"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, "/flag/cs", c.Changeset)
			assert.False(t, c.AllowUnixSockets)
		}},
		{"lists add up", []string{"--config", path, "--agent", "coder", "--writable", "/flag/w", "--read-only", "/flag/r",
			"--hide", "/flag/h", "--env", "FROM_FILE=2", "--protect", "x.code-workspace"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, []string{"tools/hooks", "x.code-workspace"}, c.Protect)
			assert.Equal(t, []string{"/file/w", "/flag/w"}, c.WritablePaths)
			assert.Equal(t, []string{"/file/r", "/flag/r"}, c.ReadOnlyPaths)
			assert.Equal(t, []string{"/file/h", "/flag/h"}, c.HiddenPaths)
			assert.Equal(t, []string{"FROM_FILE=1", "FROM_FILE=2"}, c.Env, "the flag comes last, so its value wins")
		}},
		{"changeset-writable adds a writable path and an overlaid one", []string{"--config", path, "--agent", "coder",
			"--changeset-writable", "/flag/c"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, []string{"/file/w", "/flag/c"}, c.WritablePaths)
			assert.Equal(t, []string{"/file/w", "/flag/c"}, c.ChangesetPaths)
		}},
		{"defaults of a bare agent", []string{"--config", path, "--agent", "plain"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, wd, c.Workspace, "no workspace in the file: the current directory")
			assert.Equal(t, corral.NetworkHost, c.Network)
			assert.Empty(t, c.WritablePaths)
			assert.Empty(t, c.Changeset)
			assert.False(t, c.AllowUnixSockets || c.AllowPtrace)
		}},
		{"no config file", []string{"--net", "none", "--writable", "/flag/w"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, wd, c.Workspace)
			assert.Equal(t, corral.NetworkNone, c.Network)
			assert.Equal(t, []string{"/flag/w"}, c.WritablePaths)
			assert.Empty(t, c.Mode)
		}},
		{"protect flag alone", []string{"--protect", "a", "--protect", "b/c"}, func(t *testing.T, c corral.Config) {
			assert.Equal(t, []string{"a", "b/c"}, c.Protect)
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
		{"bad file", []string{"--config", bad}, bad + `:4: agents[0].sandbox.network: "wifi" is not a network; want "host", "none" or "allow"`},
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

// TestRunConfigExitStatus goes through the whole CLI for the failures.
func TestRunConfigExitStatus(t *testing.T) {
	ws := workspace(t)
	bad := writeConfig(t, "[[agents]]\nid = \"a\"\nsandbox.mode = \"maybe\"\n")
	unusable := writeConfig(t, "[[agents]]\nid = \"a\"\nsandbox.workspace = \"does-not-exist\"\n")
	good := writeConfig(t, "[[agents]]\nid = \"a\"\n")
	bad2 := writeConfig(t, "[[agents]]\nid = \"a\"\nsandbox.writable_paths = [\"/no/such/w\"]\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"bad file", []string{"run", "--config", bad, "--", "true"}, exitUsage, bad + `:3: agents[0].sandbox.mode: "maybe" is not a mode`},
		{"missing file", []string{"run", "--config", "/no/such.toml", "--", "true"}, exitUsage, "open /no/such.toml: no such file or directory"},
		{"unknown agent", []string{"run", "--config", unusable, "--agent", "x", "--", "true"}, exitUsage, `no agent "x"; the file defines a`},
		{"agent without config", []string{"run", "--agent", "x", "--", "true"}, exitUsage, "--agent needs --config"},
		{"valid file, unusable workspace", []string{"run", "--config", unusable, "--", "true"}, exitUsage, unusable + ": workspace " + filepath.Join(filepath.Dir(unusable), "does-not-exist") + ": does not exist"},
		{"unusable path from a flag", []string{"run", "--config", good, "--hide", "/no/such/h", "--", "true"}, exitUsage, "--hide /no/such/h: does not exist"},
		{"unusable path from the file", []string{"run", "--config", bad2, "--hide", ws, "--", "true"}, exitUsage, bad2 + ": writable_paths /no/such/w: does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := cli(t, ws, tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			assertOneLine(t, stderr, tt.stderr)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}

// TestRunWithConfigFile runs commands in sandboxes built from a file.
func TestRunWithConfigFile(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	path := writeConfig(t, `[[agents]]
id = "offline"
[agents.sandbox]
workspace = "`+ws+`"
network = "none"
env = ["FROM_FILE=file"]
`)
	// /proc/net/dev lists the interfaces of the reader's network namespace.
	probe := "echo $FROM_FILE $FROM_FLAG; grep -c : /proc/net/dev; pwd"
	stdout, stderr, code := cli(t, t.TempDir(), "run", "--config", path, "--", "sh", "-c", probe)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "file\n1\n"+ws+"\n", stdout, "the file's env, network (loopback only) and workspace")

	hostDev, err := os.ReadFile("/proc/net/dev")
	require.NoError(t, err)
	hostInterfaces := strings.Count(string(hostDev), ":")
	stdout, stderr, code = cli(t, t.TempDir(), "run", "--config", path, "--net", "host", "--env", "FROM_FLAG=flag", "--", "sh", "-c", probe)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, fmt.Sprintf("file flag\n%d\n%s\n", hostInterfaces, ws), stdout,
		"flags add to the file's env; --net host replaces its network")
}

// A config file may switch the sandbox off: the command then runs with the
// caller's access, and run says so in exactly one line.
func TestRunDisabledByConfigFile(t *testing.T) {
	ws, outside := workspace(t), workspace(t)
	path := writeConfig(t, "[[agents]]\nid = \"selfhosted\"\n[agents.sandbox]\nmode = \"disabled\"\n")
	target := filepath.Join(outside, "written")
	stdout, stderr, code := cli(t, ws, "run", "--config", path, "--", "sh", "-c", `echo x > "$1"; pwd`, "sh", target)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, ws+"\n", stdout)
	assert.FileExists(t, target)
	assert.Equal(t, "corral: sandbox disabled: commands run with full host access\n", stderr)
}
