package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/config"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// The tests in this file run real sandboxes.

const testPath = "/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin"

// scene is an agent's workspace and a state directory, outside /tmp where
// the host's files would be hidden by the sandbox's own /tmp.
type scene struct {
	dir, ws, state, outside string
}

func newScene(t *testing.T) scene {
	t.Helper()
	sandboxtest.Require(t, corral.Config{})
	base, err := os.MkdirTemp("/var/tmp", "corral-agent-")
	require.NoError(t, err)
	t.Cleanup(func() { removeAll(base) })
	base, err = filepath.EvalSymlinks(base)
	require.NoError(t, err)
	s := scene{dir: base, ws: filepath.Join(base, "ws"), state: filepath.Join(base, "state"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{s.ws, s.outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(s.ws, "notes.md"), []byte("agent notes\n"), 0o644))
	return s
}

// runtime is a fresh Runtime on the scene, as a new corral process makes.
func (s scene) runtime(t *testing.T, doc string) *Runtime {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(doc), filepath.Join(s.dir, "agents.toml"))
	require.NoError(t, err)
	rt, err := New(cfg, Options{StateDir: s.state, Workspace: func(string) string { return s.ws }})
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close() })
	return rt
}

type out struct {
	stdout string
	code   int
}

func run(t *testing.T, sb *corral.Sandbox, script string, env ...string) out {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := sb.Command(ctx, "sh", "-c", script)
	c.Env = append(c.Environ(), append([]string{"PATH=" + testPath}, env...)...)
	var b, e strings.Builder
	c.Stdout, c.Stderr = &b, &e
	err := c.Run()
	if _, ok := err.(*corral.ExitError); err != nil && !ok {
		require.NoError(t, err, "%s", e.String())
	}
	return out{stdout: b.String() + e.String(), code: c.ProcessState.ExitCode()}
}

func session(t *testing.T, rt *Runtime, agent, key string) *Session {
	t.Helper()
	s, err := rt.Session(agent, key)
	require.NoError(t, err)
	return s
}

const allDoc = `
[[agents]]
id = "coder"
[agents.sandbox]
mode = "all"
scope = "session"
`

// A file in /tmp and one in the home's cache survive to the next command
// of the same scope, across processes (a new Runtime), and are absent in
// another scope.
func TestPersistenceAcrossCommands(t *testing.T) {
	s := newScene(t)
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	mark := "corral-agent-" + filepath.Base(s.dir)
	env := []string{"MARK=" + mark, "H=" + home}
	first := session(t, s.runtime(t, allDoc), "coder", "chat-1")
	r := run(t, first.Sandbox, `echo kept > /tmp/$MARK && mkdir -p "$H/.cache/$MARK" && echo cached > "$H/.cache/$MARK/f"`, env...)
	require.Equal(t, 0, r.code, r.stdout)
	assert.NoDirExists(t, filepath.Join(home, ".cache", mark), "the host's home is never written")

	again := session(t, s.runtime(t, allDoc), "coder", "chat-1")
	r = run(t, again.Sandbox, `cat /tmp/$MARK "$H/.cache/$MARK/f"`, env...)
	require.Equal(t, 0, r.code, r.stdout)
	assert.Equal(t, "kept\ncached\n", r.stdout)

	other := session(t, s.runtime(t, allDoc), "coder", "chat-2")
	r = run(t, other.Sandbox, `cat /tmp/$MARK; cat "$H/.cache/$MARK/f"`, env...)
	assert.NotEqual(t, 0, r.code)
	assert.NotContains(t, r.stdout, "kept")
	assert.NotContains(t, r.stdout, "cached")

	// The state directory, and so the other scope's, is hidden.
	r = run(t, other.Sandbox, `ls "$STATE"`, append(env, "STATE="+s.state)...)
	assert.NotEqual(t, 0, r.code, "state hidden: %s", r.stdout)
	ctl := exec.Command("ls", s.state)
	assert.NoError(t, ctl.Run(), "control: the host lists it")
}

// go build of a tiny module works in a scoped sandbox, with its cache in
// the layered home, and the cache lasts to the next command.
func TestGoBuildInScopedSandbox(t *testing.T) {
	s := newScene(t)
	require.NoError(t, os.WriteFile(filepath.Join(s.ws, "go.mod"), []byte("module tiny\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.ws, "main.go"), []byte("package main\n\nfunc main() { println(\"built\") }\n"), 0o644))
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	env := []string{"HOME=" + home, "GOCACHE=" + filepath.Join(home, ".cache", "corral-test-go-build"),
		"GOPATH=" + filepath.Join(home, "go"), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=", "CGO_ENABLED=0"}
	sess := session(t, s.runtime(t, allDoc), "coder", "build")
	r := run(t, sess.Sandbox, `go build -o /tmp/tiny . && /tmp/tiny`, env...)
	require.Equal(t, 0, r.code, r.stdout)
	assert.Contains(t, r.stdout, "built")
	r = run(t, session(t, s.runtime(t, allDoc), "coder", "build").Sandbox, `ls "$GOCACHE" | wc -l; /tmp/tiny`, env...)
	require.Equal(t, 0, r.code, r.stdout)
	assert.NotEqual(t, "0", strings.Fields(r.stdout)[0], "the build cache is still there")
	assert.NoDirExists(t, filepath.Join(home, ".cache", "corral-test-go-build"), "and only in the sandbox's home")

	// Control: a one-off sandbox loses the cache with the command.
	plain, err := corral.New(corral.Config{Workspace: s.ws})
	require.NoError(t, err)
	defer plain.Close()
	run(t, plain, `go build -o /dev/null . ; true`, env...)
	r = run(t, plain, `ls "$GOCACHE"`, env...)
	assert.NotEqual(t, 0, r.code, "no cache survives a one-off command: %s", r.stdout)
}

// npm finds its cache in the layered home and can write it; it persists.
func TestNpmCacheInScopedSandbox(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	s := newScene(t)
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	env := []string{"HOME=" + home, "npm_config_update_notifier=false"}
	sess := session(t, s.runtime(t, allDoc), "coder", "npm")
	r := run(t, sess.Sandbox, `c=$(npm config get cache) && echo "$c" && mkdir -p "$c/_cacache" && echo entry > "$c/_cacache/corral-test"`, env...)
	require.Equal(t, 0, r.code, r.stdout)
	assert.Contains(t, r.stdout, filepath.Join(home, ".npm"))
	r = run(t, session(t, s.runtime(t, allDoc), "coder", "npm").Sandbox, `cat "$(npm config get cache)/_cacache/corral-test"`, env...)
	require.Equal(t, 0, r.code, r.stdout)
	assert.Contains(t, r.stdout, "entry")
	assert.NoFileExists(t, filepath.Join(home, ".npm", "_cacache", "corral-test"), "the host's cache is not written")
}

const accessDoc = `
[[agents]]
id = "ro"
[agents.sandbox]
workspace_access = "ro"
scope = "agent"

[[agents]]
id = "none"
[agents.sandbox]
workspace_access = "none"
`

// workspace_access "ro": the sandbox's own workspace at /workspace, the
// agent's read-only at /agent.
func TestReadOnlyAgentWorkspace(t *testing.T) {
	s := newScene(t)
	sess := session(t, s.runtime(t, accessDoc), "ro", "chat")
	assert.True(t, sess.ReadOnlyWorkspace())
	r := run(t, sess.Sandbox, `pwd; cat /agent/notes.md; echo mine > /workspace/mine.txt && echo wrote`)
	require.Equal(t, 0, r.code, r.stdout)
	assert.Equal(t, "/workspace\nagent notes\nwrote\n", r.stdout)
	assert.NoFileExists(t, filepath.Join(s.ws, "mine.txt"), "the own workspace is not the agent's")

	for _, probe := range []string{`echo x >> /agent/notes.md`, `echo x > /agent/new`, `rm /agent/notes.md`, `echo x > "$WS/new"`} {
		r := run(t, sess.Sandbox, probe, "WS="+s.ws)
		assert.NotEqual(t, 0, r.code, "%s: %s", probe, r.stdout)
	}
	b, _ := os.ReadFile(filepath.Join(s.ws, "notes.md"))
	assert.Equal(t, "agent notes\n", string(b))
	assert.NoFileExists(t, filepath.Join(s.ws, "new"))
	// Control: the same writes work on the host.
	require.NoError(t, exec.Command("sh", "-c", `echo x > "$0/new"`, s.ws).Run())
	assert.FileExists(t, filepath.Join(s.ws, "new"))
}

// workspace_access "none": the agent's workspace is invisible.
func TestNoAccessHidesAgentWorkspace(t *testing.T) {
	s := newScene(t)
	sess := session(t, s.runtime(t, accessDoc), "none", "chat")
	assert.False(t, sess.ReadOnlyWorkspace())
	r := run(t, sess.Sandbox, `cat "$WS/notes.md"; ls /agent; pwd`, "WS="+s.ws)
	assert.NotContains(t, r.stdout, "agent notes")
	assert.Contains(t, r.stdout, "/workspace")
	out, err := exec.Command("cat", filepath.Join(s.ws, "notes.md")).Output()
	require.NoError(t, err)
	assert.Equal(t, "agent notes\n", string(out), "control: the host reads it")
}

// mode "non-main": the main session runs on the host, the others sandboxed.
func TestNonMainMode(t *testing.T) {
	s := newScene(t)
	rt := s.runtime(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nmode = \"non-main\"\n")
	target := filepath.Join(s.outside, "written")
	main := session(t, rt, "a", "main")
	assert.False(t, main.Sandboxed)
	r := run(t, main.Sandbox, fmt.Sprintf(`echo main > %q`, target))
	require.Equal(t, 0, r.code, r.stdout)
	assert.FileExists(t, target, "the main session has the host's access")
	require.NoError(t, os.Remove(target))

	chat := session(t, rt, "a", "chat")
	assert.True(t, chat.Sandboxed)
	r = run(t, chat.Sandbox, fmt.Sprintf(`echo chat > %q`, target))
	assert.NotEqual(t, 0, r.code)
	assert.NoFileExists(t, target, "a non-main session is sandboxed")
}

// A changed configuration recreates an idle sandbox (its /tmp goes) and
// keeps a hot one, marked stale.
func TestConfigChangeHotAndCold(t *testing.T) {
	s := newScene(t)
	c := &clock{t: time.Now()}
	mk := func(network string) *Runtime {
		cfg, err := config.Parse(strings.NewReader("[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \""+network+"\"\n"), filepath.Join(s.dir, "a.toml"))
		require.NoError(t, err)
		rt, err := New(cfg, Options{StateDir: s.state, Workspace: func(string) string { return s.ws }, Now: c.now})
		require.NoError(t, err)
		t.Cleanup(func() { rt.Close() })
		return rt
	}
	r := run(t, session(t, mk("host"), "a", "x").Sandbox, `echo v1 > /tmp/state`)
	require.Equal(t, 0, r.code, r.stdout)

	c.add(time.Minute) // hot
	hot := session(t, mk("none"), "a", "x")
	assert.True(t, hot.Stale, "a hot sandbox is kept, marked stale")
	assert.Equal(t, "v1\n", run(t, hot.Sandbox, `cat /tmp/state`).stdout, "with its state")
	es, _ := OpenRegistry(RegistryPath(s.state)).List()
	assert.True(t, es[0].Stale)

	c.add(10 * time.Minute) // cold
	cold := session(t, mk("none"), "a", "x")
	assert.False(t, cold.Stale)
	r = run(t, cold.Sandbox, `cat /tmp/state`)
	assert.NotEqual(t, 0, r.code, "recreated: its /tmp is new: %s", r.stdout)
	es, _ = OpenRegistry(RegistryPath(s.state)).List()
	assert.False(t, es[0].Stale)
	assert.Equal(t, ConfigHash(cold.sandboxConfig(t, s), s.ws), es[0].ConfigHash)
}

func (s *Session) sandboxConfig(t *testing.T, sc scene) config.Sandbox {
	cfg, err := config.Parse(strings.NewReader("[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \"none\"\n"), filepath.Join(sc.dir, "a.toml"))
	require.NoError(t, err)
	return cfg.Agents[0].Sandbox
}

// TestSessionZones: a session's sandbox shows the zones its agent
// declares at /NAME, as every other entry point's does, and says so
// (Session.Zones, for the file tools); a zone whose changes need review
// without a changeset refuses the session, naming it. An agent declaring
// none, the control, sees no /data.
func TestSessionZones(t *testing.T) {
	s := newScene(t)
	data := filepath.Join(s.dir, "data")
	require.NoError(t, os.MkdirAll(data, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(data, "in.txt"), []byte("zone input\n"), 0o644))
	rt := s.runtime(t, fmt.Sprintf(`
[zones.data]
path = %q
mode = "ro"
[zones.rev]
path = %q
mode = "rw"
[[agents]]
id = "zoned"
[agents.sandbox]
zones = [{ name = "data" }]
[[agents]]
id = "reviewed"
[agents.sandbox]
zones = [{ name = "rev", mode = "rw" }]
[[agents]]
id = "plain"
`, data, s.outside))
	z := session(t, rt, "zoned", "s1")
	require.NotNil(t, z.Zones)
	assert.Equal(t, []string{"data"}, z.Zones.Names())
	got := run(t, z.Sandbox, "cat /data/in.txt; echo x > /data/y")
	assert.Contains(t, got.stdout, "zone input\n")
	assert.NoFileExists(t, filepath.Join(data, "y"), "a read-only zone")

	_, err := rt.Session("reviewed", "s1")
	var ae *config.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "zones", ae.Key)
	assert.ErrorContains(t, err, "/rev: its changes need review")

	p := session(t, rt, "plain", "s1")
	assert.Nil(t, p.Zones)
	assert.NotEqual(t, 0, run(t, p.Sandbox, "cat /data/in.txt").code, "control: no zone declared, none shown")
}
