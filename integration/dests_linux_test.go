package integration

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/internal/testhook"
	"github.com/corralhq/corral/tools"
)

// destWorld is a world whose workspace the sandbox shows at /workspace,
// with an agent's directory read-only at /agent.
func destWorld(t *testing.T) (*world, string, corral.Config) {
	w := newWorld(t)
	agent := realDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(agent, "notes.md"), []byte("agent notes\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, ".git", "hooks"), 0o755))
	w.vars = append(w.vars, "AGENT="+agent)
	cfg := w.config()
	cfg.WorkspaceDest = "/workspace"
	cfg.Binds = []corral.Bind{{Source: agent, Dest: "/agent", ReadOnly: true}}
	return w, agent, cfg
}

// The workspace and the agent's directory appear at their destinations
// with their rules, and the rest of the tree is still there.
func TestDestinationsShowSourcesWithTheirRules(t *testing.T) {
	for _, p := range []string{"/workspace", "/agent"} {
		if _, err := os.Lstat(p); err == nil {
			t.Skipf("the host has %s itself, which this test would confuse with the destination", p)
		}
	}
	w, agent, cfg := destWorld(t)
	r := w.sandboxed(cfg, `pwd; echo made > /workspace/made.txt && cat /agent/notes.md && test -x /usr/bin/env &&
		echo t > /tmp/t && grep -q Pid /proc/self/status && echo fine`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, "/workspace\nagent notes\nfine\n", r.stdout)
	assert.True(t, fileHas(filepath.Join(w.ws, "made.txt"), "made"), "a write to /workspace lands in the workspace")
	assert.False(t, exists("/workspace"), "the host's root is not written to make the mount point")
	ro := w.sandboxed(cfg, `mkdir /corral-probe-dir 2>/dev/null && echo escaped; touch /corral-probe-file 2>/dev/null && echo escaped;
		(echo x > /usr/corral-probe) 2>/dev/null && echo escaped; touch /dev/corral-probe 2>/dev/null && echo escaped;
		echo ok > /dev/null && head -c1 /dev/urandom >/dev/null && echo devices; true`)
	assert.Contains(t, ro.stdout, "devices", "the devices still work: %s", ro)
	assert.NotContains(t, ro.stdout, "escaped", "the rebuilt root stays read-only: %s", ro)
	assert.False(t, exists("/corral-probe-dir"))
	assert.False(t, exists("/agent"))

	// Each probe prints "escaped" only where it got through; escaped says
	// so from the host where the sandbox's word cannot be trusted.
	probes := []struct {
		name, script, control string
		escaped               func() bool
	}{
		{"write the read-only destination", `echo x >> /agent/notes.md`, `echo x >> "$AGENT/notes.md"`,
			func() bool { return fileHas(filepath.Join(agent, "notes.md"), "x\n") }},
		{"create in the read-only destination", `echo x > /agent/new`, `echo x > "$AGENT/new"`,
			func() bool { return exists(filepath.Join(agent, "new")) }},
		{"read a hidden path in the workspace's destination", `cat /workspace/secret/token`, `cat "$SECRET/token"`, nil},
		{"write a read-only path in the workspace's destination", `echo x > /workspace/data/x`, `echo x > "$DATA/x"`,
			func() bool { return exists(filepath.Join(w.data, "x")) }},
		{"plant a git hook through the destination", `echo x > /workspace/.git/hooks/pre-commit`, `echo x > "$WS/.git/hooks/pre-commit"`,
			func() bool { return exists(filepath.Join(w.ws, ".git/hooks/pre-commit")) }},
		{"write the workspace at its host path", `echo x > "$WS/host-path"`, `echo x > "$WS/host-path"`,
			func() bool { return exists(filepath.Join(w.ws, "host-path")) }},
	}
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			got := w.sandboxed(cfg, p.script)
			assert.NotContains(t, got.stdout, "s3cr3t", "%s", got)
			if p.escaped != nil {
				assert.False(t, p.escaped(), "the host is unchanged: %s", got)
			}
			ctl := w.bare(p.control)
			assert.Equal(t, 0, ctl.code, "the same probe works on the host: %s", ctl)
			if p.escaped != nil {
				assert.True(t, p.escaped(), "the control changed the host")
			} else {
				assert.Contains(t, ctl.stdout, "s3cr3t")
			}
		})
	}
}

// Destinations under a directory that exists on the host keep its other
// entries: only the new name is added, and the host directory is untouched.
func TestDestinationBesideHostEntries(t *testing.T) {
	w := newWorld(t)
	// Outside /tmp: the sandbox's own /tmp would make the mount point there.
	parent, err := os.MkdirTemp("/var/tmp", "corral-dest-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(parent) })
	require.NoError(t, os.WriteFile(filepath.Join(parent, "kept"), []byte("kept\n"), 0o644))
	require.NoError(t, os.Symlink("kept", filepath.Join(parent, "link")))
	src := realDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(src, "f"), []byte("from source\n"), 0o644))
	cfg := w.config()
	cfg.Binds = []corral.Bind{{Source: src, Dest: filepath.Join(parent, "mnt")}}
	w.vars = append(w.vars, "P="+parent)
	r := w.sandboxed(cfg, `cd "$P" && cat kept link mnt/f && echo w > mnt/w && ! (echo x > new) 2>/dev/null && echo ok`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, "kept\nkept\nfrom source\nok\n", r.stdout)
	assert.True(t, fileHas(filepath.Join(src, "w"), "w"), "the destination is writable into its source")
	assert.False(t, exists(filepath.Join(parent, "mnt")), "the host directory got no mount point")
	assert.False(t, exists(filepath.Join(parent, "new")))
	ctl := w.bare(`echo x > "$P/new"`)
	assert.Equal(t, 0, ctl.code, "the host directory itself is writable: %s", ctl)
}

// Where there is no mount namespace (the landlock rung, or none), a
// destination cannot be made: New fails naming it rather than running
// with the source at its own path. Control: the same config without the
// destination builds.
func TestDestinationsFailClosedWithoutMountNamespace(t *testing.T) {
	w, _, cfg := destWorld(t)
	cfg.Fallback = corral.FallbackWarn
	restore := testhook.Disable(string(corral.LayerUserNS))
	defer restore()
	_, err := corral.New(cfg)
	var se *corral.SetupError
	require.True(t, errors.As(err, &se), "want a setup error, got %v", err)
	assert.Equal(t, corral.LayerMountNS, se.Layer)
	assert.Contains(t, err.Error(), "/workspace")

	plain := w.config()
	plain.Fallback = corral.FallbackWarn
	sb, err := corral.New(plain)
	require.NoError(t, err, "without destinations the same host builds a sandbox")
	sb.Close()
}

// A sandbox without a workspace refuses the landlock rung, where the
// private /tmp its commands would start in is the host's, rather than
// running there. Control: with a workspace the same host builds one.
func TestNoWorkspaceFailsClosedWithoutMountNamespace(t *testing.T) {
	w := newWorld(t)
	restore := testhook.Disable(string(corral.LayerUserNS))
	defer restore()
	_, err := corral.New(corral.Config{NoWorkspace: true, Fallback: corral.FallbackWarn})
	var se *corral.SetupError
	require.True(t, errors.As(err, &se), "want a setup error, got %v", err)
	assert.Equal(t, corral.LayerMountNS, se.Layer)
	assert.Contains(t, err.Error(), "without a workspace")

	plain := w.config()
	plain.Fallback = corral.FallbackWarn
	sb, err := corral.New(plain)
	require.NoError(t, err, "with a workspace the same host builds a sandbox")
	sb.Close()
}

// A path hidden inside the source of a destination stays hidden there even
// when the source itself is hidden at its host path (as zones and a
// persistent sandbox's own workspace are): hiding the source does not
// hide what the destination shows of it. Control: without the inner
// entry the probe reads the file.
func TestDestinationKeepsInnerHiddenPaths(t *testing.T) {
	if _, err := os.Lstat("/data"); err == nil {
		t.Skip("the host has /data itself, which this test would confuse with the destination")
	}
	w := newWorld(t)
	state := realDir(t)
	src, ws := filepath.Join(state, "data"), filepath.Join(state, "ws")
	for _, d := range []string{src, ws} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "keys"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "keys", "id"), []byte("key material\n"), 0o600))
	}
	probe := `cat /data/keys/id; cat /workspace/keys/id; ls /data/keys /workspace/keys`
	for _, hidden := range [][]string{{src, state}, {state, src}} {
		cfg := w.config()
		cfg.Workspace, cfg.WorkspaceDest = ws, "/workspace"
		cfg.Binds = []corral.Bind{{Source: src, Dest: "/data"}}
		cfg.HiddenPaths = append(hidden, filepath.Join(src, "keys"), filepath.Join(ws, "keys"))
		r := w.sandboxed(cfg, probe)
		assert.NotEqual(t, 0, r.code, "%s", r)
		assert.NotContains(t, r.stdout, "key material")
		assert.NotContains(t, r.stdout, "id")

		cfg.HiddenPaths = hidden
		ctl := w.sandboxed(cfg, probe)
		assert.Equal(t, "key material\nkey material\n/data/keys:\nid\n\n/workspace/keys:\nid\n", ctl.stdout, "control: %s", ctl)
	}
}

// With RealPathsFallback, a rung without a mount namespace (here the
// landlock rung) shows each source at its own host path instead of
// failing: the workspace, the read-only agent directory (still read-only)
// and a writable bind (still writable), and says so through Logf. The
// Sandbox reports the paths as they are, so the file tools follow.
// Control: without the option the same host refuses the destinations.
func TestDestinationsAtRealPathsWithoutMountNamespace(t *testing.T) {
	w, agent, cfg := destWorld(t)
	shared := realDir(t)
	w.vars = append(w.vars, "SHARED="+shared)
	cfg.Binds = append(cfg.Binds, corral.Bind{Source: shared, Dest: "/shared"})
	cfg.Fallback = corral.FallbackWarn
	restore := testhook.Disable(string(corral.LayerUserNS))
	defer restore()

	_, err := corral.New(cfg)
	var se *corral.SetupError
	require.ErrorAs(t, err, &se, "control: without the option the destinations are refused")
	assert.Equal(t, corral.LayerMountNS, se.Layer)
	assert.Contains(t, err.Error(), "RealPathsFallback")

	var logged []string
	cfg.RealPathsFallback = true
	cfg.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()
	assert.Contains(t, strings.Join(logged, "\n"), "rung landlock has no mount namespace: paths are shown at their host paths (RealPathsFallback): "+
		"/workspace is "+w.ws+", /agent is "+agent+", /shared is "+shared)
	assert.Equal(t, w.ws, sb.WorkspaceDir())
	assert.Empty(t, sb.Binds())
	assert.Equal(t, "/agent/notes.md", sb.HostPath("/agent/notes.md"))

	run := func(script string) result {
		c := sb.Command(t.Context(), "sh", "-c", script)
		c.Env = w.env()
		return collect(t, c.Run, &c.Stdout, &c.Stderr, func() int { return c.ProcessState.ExitCode() })
	}
	r := run(`pwd; cat "$AGENT/notes.md"; echo w > "$SHARED/w" && echo wrote; test -e /agent || echo "no /agent"`)
	assert.Equal(t, w.ws+"\nagent notes\nwrote\nno /agent\n", r.stdout, "%s", r)
	assert.True(t, fileHas(filepath.Join(shared, "w"), "w"))
	r = run(`echo x >> "$AGENT/notes.md"`)
	assert.NotEqual(t, 0, r.code, "the agent's directory stays read-only: %s", r)
	assert.False(t, fileHas(filepath.Join(agent, "notes.md"), "x\n"))
	assert.Equal(t, 0, w.bare(`echo x >> "$AGENT/notes.md"`).code, "control: writable on the host")

	f, err := tools.NewFileFor(sb)
	require.NoError(t, err)
	_, err = f.Read("/agent/notes.md")
	assert.ErrorIs(t, err, tools.ErrOutsideWorkspace, "the file tool follows: /agent is not there")

	// A source inside a hidden path cannot be shown at its own path.
	state := realDir(t)
	inside := filepath.Join(state, "ws")
	require.NoError(t, os.Mkdir(inside, 0o755))
	hidden := cfg
	hidden.Workspace, hidden.HiddenPaths, hidden.Binds = inside, []string{state}, nil
	_, err = corral.New(hidden)
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "/workspace cannot be shown at its host path "+inside+" instead: it lies in the hidden path "+state)
}
