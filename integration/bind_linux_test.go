//go:build linux

package integration

import (
	"context"
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

//go:embed testdata/bindsock.c
var bindsockC string

//go:embed testdata/nodump.c
var nodumpC string

// buildC compiles the C program src into dir as name, and returns the
// binary's path.
func buildC(t *testing.T, name, src, dir string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("a C compiler is needed to build " + name)
	}
	file := filepath.Join(t.TempDir(), name+".c")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	bin := filepath.Join(dir, name)
	out, err := exec.Command(cc, "-O1", "-pthread", "-o", bin, file).CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// isSocket reports whether path is a socket file on the host.
func isSocket(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// A unix socket bound to a protected name would put a socket file there on
// the host at once, where none can be staged: the bind is refused and
// reported, however the name is reached (at the top, in a directory with
// no .git, relatively from another directory, through /proc/self/cwd, at
// a name that is a symlink). Without the sandbox, or with the names
// allowed, every bind makes its socket file.
func TestCreatedSocketBindProtected(t *testing.T) {
	names := []string{".vscode", "sub/.git", ".claude", ".mcp.json", ".envrc"}
	const script = `mkdir -p sub && ./bindsock .vscode sub/.git && cd sub && ../bindsock ../.claude /proc/self/cwd/../.mcp.json && cd .. && ./bindsock .envrc`
	for _, mode := range []string{"bare", "allowed", "boxed"} {
		t.Run(mode, func(t *testing.T) {
			w := newWorld(t)
			buildC(t, "bindsock", bindsockC, w.ws)
			// A protected name that is a symlink already: bind never
			// follows it, so nothing is made where it points.
			require.NoError(t, os.Symlink("missing", filepath.Join(w.ws, ".envrc")))
			var r result
			var c *corral.Cmd
			switch mode {
			case "bare":
				r = w.bare(script)
			default:
				cfg := w.config()
				cfg.AllowUnixSockets = true
				if mode == "allowed" {
					cfg.AllowPlanting = []string{".vscode", ".git", ".claude", ".mcp.json", ".envrc"}
				}
				r, c = w.sandboxedCmd(cfg, script)
			}
			require.Equal(t, 0, r.code, r.String())
			assert.NotContains(t, r.stdout, "socket:", "unix sockets are allowed")
			assert.False(t, exists(filepath.Join(w.ws, "missing")), "%s: a bind followed a symlink", mode)
			assert.Contains(t, r.stdout, ".envrc: Address already in use")
			for _, name := range names[:4] {
				host := filepath.Join(w.ws, name)
				if mode != "boxed" {
					require.True(t, isSocket(host), "%s: the probe must make %s: %s", mode, name, r.stdout)
					continue
				}
				assert.False(t, exists(host), "a socket file reached the host at %s: %s", name, r.stdout)
				assert.Contains(t, strings.Join(c.Dropped(), "\n"), host+": refused", "the refusal is reported")
			}
			if mode == "boxed" {
				assert.Equal(t, 4, strings.Count(r.stdout, "Permission denied"), r.stdout)
			}
		})
	}
}

// Ordinary binds keep working with the init performing them: a socket
// file in the workspace, /tmp and a subdirectory, with the command's
// umask; an abstract name; TCP and route netlink. The path the command
// gave is the address the socket carries, but a path through a symlink,
// which carries its last name alone.
func TestCreatedSocketBindOrdinary(t *testing.T) {
	w := newWorld(t)
	buildC(t, "bindsock", bindsockC, w.ws)
	cfg := w.config()
	cfg.AllowUnixSockets = true
	// The workspace's own path, where it fits in sun_path's 108 bytes.
	top := w.ws + "/top.sock"
	if len(top) >= 108 {
		top = "top.sock"
	}
	script := `umask 027 && mkdir -p sub && ln -s sub lnk && ./bindsock ok.sock "` + top + `" /tmp/t.sock sub/deep.sock lnk/via.sock @corral-abstract -i -n && ` +
		`cd sub && ../bindsock rel.sock`
	r, _ := w.sandboxedCmd(cfg, script)
	require.Equal(t, 0, r.code, r.String())
	for _, want := range []string{
		"ok.sock: bound as ok.sock, connected",
		top + ": bound as " + top + ", connected",
		"/tmp/t.sock: bound as /tmp/t.sock, connected",
		"sub/deep.sock: bound as sub/deep.sock, connected",
		"lnk/via.sock: bound as via.sock, no connect",
		"@corral-abstract: bound as @corral-abstract",
		"inet: bound, port chosen",
		"netlink: bound, own pid",
		"rel.sock: bound as rel.sock, connected",
	} {
		assert.Contains(t, r.stdout, want)
	}
	for _, name := range []string{"ok.sock", "top.sock", "sub/deep.sock", "sub/via.sock", "sub/rel.sock"} {
		fi, err := os.Lstat(filepath.Join(w.ws, name))
		require.NoError(t, err, name)
		assert.Equal(t, os.ModeSocket|0o750, fi.Mode()&(os.ModeType|os.ModePerm), "%s: made with the command's umask", name)
	}
}

// Without AllowUnixSockets a command still has socketpair, whose sockets
// can bind to a name: Landlock grants no socket file then, on either
// rung, so a protected name gets none either, and no bind stops in the
// init. mknod(S_IFSOCK) is refused alike. Without the sandbox both make
// their files.
func TestCreatedSocketPairBind(t *testing.T) {
	const script = `./bindsock -p .vscode pair.sock && ./bindsock -m .idea node.sock`
	names := []string{".vscode", "pair.sock", ".idea", "node.sock"}
	w := newWorld(t)
	buildC(t, "bindsock", bindsockC, w.ws)
	r := w.bare(script)
	require.Equal(t, 0, r.code, r.String())
	for _, name := range names {
		require.True(t, isSocket(filepath.Join(w.ws, name)), "without the sandbox the probe makes %s: %s", name, r.stdout)
	}
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			w := newWorld(t)
			buildC(t, "bindsock", bindsockC, w.ws)
			sb, _ := rungSandbox(t, rung, w.config())
			c := sb.Command(context.Background(), "sh", "-c", script)
			c.Env = w.env()
			out, err := c.CombinedOutput()
			require.NoError(t, err, string(out))
			for _, name := range names {
				assert.False(t, exists(filepath.Join(w.ws, name)), "%s was made: %s", name, out)
			}
			assert.Equal(t, 4, strings.Count(string(out), "Permission denied"), string(out))
		})
	}
}

// A race on the address: one thread flips it in memory between a harmless
// name and a protected one while another binds it in a loop. The init
// copies the address once and binds that copy, so no socket file reaches
// the host under the protected name. Without the sandbox the same program
// makes one.
func TestCreatedSocketBindRace(t *testing.T) {
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		buildC(t, "bindsock", bindsockC, w.ws)
		var r result
		if boxed {
			cfg := w.config()
			cfg.AllowUnixSockets = true
			r = w.sandboxed(cfg, `./bindsock -race 3000`)
		} else {
			// The flipping thread may not get a core before the loop
			// ends on a loaded machine: run the probe until it wins.
			for range 20 {
				if r = w.bare(`./bindsock -race 3000`); r.code != 0 || exists(filepath.Join(w.ws, ".mcp.json")) {
					break
				}
			}
		}
		require.Equal(t, 0, r.code, r.String())
		planted := exists(filepath.Join(w.ws, ".mcp.json"))
		if boxed {
			assert.False(t, planted, "a socket file reached the host under a protected name")
		} else {
			require.True(t, planted, "the race must make it without the sandbox")
		}
	}
}

// sandboxedCmd is world.sandboxed, returning the command too, for what it
// reports once it has exited (Dropped).
func (w *world) sandboxedCmd(cfg corral.Config, script string) (result, *corral.Cmd) {
	w.t.Helper()
	sandboxtest.Require(w.t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(w.t, err)
	defer sb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := sb.Command(ctx, "sh", "-c", script)
	c.Env = w.env()
	return collect(w.t, c.Run, &c.Stdout, &c.Stderr, func() int { return c.ProcessState.ExitCode() }), c
}

// A symlink with a protected name that leads nowhere when the command
// starts would let the command make its target as an ordinary directory
// and create in it what the host then reads through the link
// (.vscode/tasks.json), through the link or straight. The target is
// protected by the name the link gives it: made by the command, it is
// staged, and what is made in it, a file, a directory and a socket alike,
// never reaches the host; it is reported. Without the sandbox the probe
// plants. Through ordinary symlinks, relative and absolute, names are made
// as usual.
func TestCreatedThroughProtectedSymlink(t *testing.T) {
	const script = `mkdir nowhere && echo planted > .vscode/tasks.json; echo planted > nowhere/straight.json; mkdir .vscode/sub; ./bindsock .vscode/s; ls nowhere; ` +
		`mkdir -p real/in && ln -s real l && ln -s "$WS/real/in" abs && ln -s ../../real/in real/in/up && ` +
		`echo ok > l/f && mkdir abs/d && echo ok > l/in/up/g && mv l/f abs/d/h && ./bindsock l/in/s`
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		buildC(t, "bindsock", bindsockC, w.ws)
		require.NoError(t, os.Symlink("nowhere", filepath.Join(w.ws, ".vscode")))
		var r result
		var c *corral.Cmd
		if boxed {
			cfg := w.config()
			cfg.AllowUnixSockets = true
			r, c = w.sandboxedCmd(cfg, script)
		} else {
			r = w.bare(script)
		}
		tasks := filepath.Join(w.ws, ".vscode/tasks.json")
		if !boxed {
			require.True(t, fileHas(tasks, "planted"), "without the sandbox the probe plants: %s", r.String())
			require.True(t, isSocket(filepath.Join(w.ws, "nowhere/s")))
			continue
		}
		assert.False(t, exists(tasks), "planted through the link: %s", r.String())
		for _, name := range []string{"sub", "s", "straight.json"} {
			assert.False(t, exists(filepath.Join(w.ws, "nowhere", name)), "%s made in the link's target: %s", name, r.String())
		}
		assert.Contains(t, strings.Join(c.Dropped(), "\n"), filepath.Join(w.ws, "nowhere")+":")
		for _, name := range []string{"real/in/d/h", "real/in/g"} {
			assert.True(t, fileHas(filepath.Join(w.ws, name), "ok"), "%s made through ordinary links: %s", name, r.String())
		}
		assert.True(t, isSocket(filepath.Join(w.ws, "real/in/s")), r.String())
	}
}
