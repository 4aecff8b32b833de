//go:build linux

package integration

import (
	"context"
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

// whileRunning runs script in the workspace (in a sandbox from cfg, or on
// the host when cfg is nil) and, once it has touched "ready", calls check
// while it still runs: the command waits for the file "go", made after
// check returns. It returns what the command printed.
func whileRunning(t *testing.T, w *world, cfg *corral.Config, script string, check func()) string {
	t.Helper()
	full := gitEnv + script + ` && touch ready && while [ ! -e go ]; do sleep 0.02; done`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out syncBuffer
	var wait func() error
	if cfg == nil {
		c := exec.CommandContext(ctx, "sh", "-c", full)
		c.Env, c.Dir, c.Stdout, c.Stderr = w.env(), w.ws, &out, &out
		require.NoError(t, c.Start())
		wait = c.Wait
	} else {
		sandboxtest.Require(t, *cfg)
		sb, err := corral.New(*cfg)
		require.NoError(t, err)
		defer sb.Close()
		c := sb.Command(ctx, "sh", "-c", full)
		c.Env, c.Stdout, c.Stderr = w.env(), &out, &out
		require.NoError(t, c.Start())
		wait = c.Wait
	}
	ready := filepath.Join(w.ws, "ready")
	require.Eventually(t, func() bool { return exists(ready) }, 50*time.Second, 10*time.Millisecond,
		"the command got ready: %s", out.String())
	check()
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "go"), nil, 0o644))
	err := wait()
	require.NoError(t, err, out.String())
	os.Remove(ready)
	os.Remove(filepath.Join(w.ws, "go"))
	return out.String()
}

// A protected entry the command creates is not on the host while the
// command runs: the host sees an empty placeholder at most, never what
// the command wrote into it. With the name allowed (AllowPlanting), or
// without the sandbox, the host sees it at once.
func TestCreatedProtectedNotOnHostWhileRunning(t *testing.T) {
	cases := []struct {
		name   string
		allow  string // the protected name the control allows
		script string
		path   string // the host file whose content counts, relative to the workspace
		report bool
	}{
		{"vscode tasks", ".vscode", `mkdir .vscode && echo planted > .vscode/tasks.json`, ".vscode/tasks.json", false},
		{"mcp.json", ".mcp.json", `echo planted > .mcp.json`, ".mcp.json", false},
		{"envrc", ".envrc", `echo planted > .envrc`, ".envrc", false},
		{"mcp.json saved by a rename", ".mcp.json", `echo planted > t && mv t .mcp.json`, ".mcp.json", false},
		{"claude moved into place", ".claude", `mkdir c && echo planted > c/settings.json && mv c .claude`, ".claude/settings.json", false},
		{"nested vscode", ".vscode", `mkdir -p a/b/.vscode && echo planted > a/b/.vscode/tasks.json`, "a/b/.vscode/tasks.json", false},
		{"git init sub", ".git", `git init -q sub && git -C sub config core.fsmonitor planted`, "sub/.git/config", false},
		{"with a report", ".mcp.json", `echo planted > .mcp.json`, ".mcp.json", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []string{"bare", "allowed", "boxed"} {
				w := newWorld(t)
				var cfg *corral.Config
				if mode != "bare" {
					cc := w.config()
					cc.Report = c.report
					if mode == "allowed" {
						cc.AllowPlanting = []string{c.allow}
					}
					cfg = &cc
				}
				host := filepath.Join(w.ws, c.path)
				out := whileRunning(t, w, cfg, c.script+` && cat `+c.path, func() {
					if mode == "boxed" {
						assert.False(t, fileHas(host, "planted"), "%s: the host sees what the command wrote while it runs", mode)
					} else {
						assert.True(t, fileHas(host, "planted"), "%s: the probe must see it", mode)
					}
				})
				assert.Contains(t, out, "planted", "%s: the command sees what it wrote", mode)
			}
		})
	}
}

// git init and git clone inside keep working, and the new repository lands
// on the host (rebuilt from its allowed parts) once the command exits.
func TestCreatedRepositoryLands(t *testing.T) {
	w := newWorld(t)
	initRepo(t, w)
	cfg := w.config()
	script := `git init -q sub && cd sub && echo x > f && git add f && git commit -q -m one && cd .. && ` +
		`git clone -q sub cl && git -C cl log --oneline | wc -l`
	var during bool
	out := whileRunning(t, w, &cfg, script, func() {
		during = fileHas(filepath.Join(w.ws, "sub/.git/HEAD"), "ref:")
	})
	assert.False(t, during, "the new repository is not on the host while the command runs")
	assert.Contains(t, out, "1")
	log := hostGit(t, w, `git -C sub log --oneline && git -C cl log --oneline && git -C cl status --short`)
	assert.Equal(t, 2, strings.Count(log, "one"), log)
}

// racer flips two path buffers between a harmless name and a protected one
// in one thread while the main thread creates them in a loop.
const racer = `#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static char buf[16] = "aaaa.json", dbuf[16] = "aaaaaaa";
static volatile int stop;
static void *flip(void *x) {
	for (int i = 0; !stop; i ^= 1) {
		memcpy(buf, i ? ".mcp.json" : "aaaa.json", 9);
		memcpy(dbuf, i ? ".vscode" : "aaaaaaa", 7);
	}
	return x;
}
int main(int argc, char **argv) {
	pthread_t t;
	pthread_create(&t, 0, flip, 0);
	for (int i = atoi(argv[1]); i > 0; i--) {
		int fd = open(buf, O_CREAT | O_WRONLY | O_APPEND, 0644);
		if (fd >= 0) {
			write(fd, "planted\n", 8);
			close(fd);
		}
		mkdir(dbuf, 0755);
		unlink("aaaa.json");
		rmdir("aaaaaaa");
	}
	stop = 1;
	pthread_join(t, 0);
	struct stat st;
	if (stat(".vscode", &st) == 0) {
		int fd = open(".vscode/tasks.json", O_CREAT | O_WRONLY, 0644);
		if (fd >= 0) {
			write(fd, "planted\n", 8);
			close(fd);
		}
	}
	return 0;
}
`

// A race on the name: one thread flips a path in memory between a harmless
// name and a protected one while another creates it in a loop. The
// listener reads the name once and performs the call itself, so no content
// ever reaches the host under the protected name. Without the sandbox the
// same program plants it.
func TestCreatedNameRace(t *testing.T) {
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		buildC(t, "racer", racer, w.ws)
		var cfg *corral.Config
		if boxed {
			c := w.config()
			cfg = &c
		}
		mcp, tasks := filepath.Join(w.ws, ".mcp.json"), filepath.Join(w.ws, ".vscode/tasks.json")
		whileRunning(t, w, cfg, `./racer 5000`, func() {
			planted := fileHas(mcp, "planted") || fileHas(tasks, "planted")
			if boxed {
				assert.False(t, planted, "content reached the host under a protected name")
			} else {
				require.True(t, planted, "the race must plant without the sandbox")
			}
		})
	}
}

// An embedded bare repository (HEAD, objects/, refs/, no .git) is guarded
// like a .git directory: git run inside it on the host afterwards takes its
// config and hooks from it. One that exists when the command starts is
// staged and merged back through the allowlist; one the command makes is
// rebuilt from its allowed parts when it exits.
func TestEmbeddedBareRepository(t *testing.T) {
	const plant = `git -C "$1" config alias.x '!touch "$MARK"' && ` +
		`printf '#!/bin/sh\ntouch "$MARK"\n' > "$1/hooks/post-update" && chmod +x "$1/hooks/post-update"`
	cases := []struct{ name, setup, script string }{
		{"existing", `git init -q --bare emb.git`, `set -- emb.git; ` + plant},
		{"made inside", ``, `git init -q --bare emb.git && set -- emb.git && ` + plant},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, boxed := range []bool{false, true} {
				w := newWorld(t)
				mark := filepath.Join(w.outside, "mark")
				w.vars = append(w.vars, "MARK="+mark)
				if c.setup != "" {
					hostGit(t, w, c.setup)
				}
				var r result
				if boxed {
					r = w.sandboxed(w.config(), gitEnv+c.script)
				} else {
					r = w.bare(gitEnv + c.script)
				}
				require.Equal(t, 0, r.code, r.String())
				hostGit(t, w, `cd emb.git && git x; git update-server-info; hooks/post-update 2>/dev/null; true`)
				if !boxed {
					require.True(t, exists(mark), "the probe must work without the sandbox")
				} else {
					assert.False(t, exists(mark), "planted through a bare repository")
					assert.True(t, fileHas(filepath.Join(w.ws, "emb.git/HEAD"), "ref:"), "the repository stays usable")
				}
			}
		})
	}
}

// An open with O_CREAT through a descriptor's link (/dev/stdin,
// /dev/stdout) is performed by the init too, and gets no more than the
// command's own kernel would grant: a read-only stdin from outside every
// writable path stays unwritable, a pipe as stdout is written.
func TestCreatedReopenStdio(t *testing.T) {
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		in := filepath.Join(w.outside, "input")
		require.NoError(t, os.WriteFile(in, []byte("original\n"), 0o644))
		f, err := os.Open(in)
		require.NoError(t, err)
		defer f.Close()
		const script = `echo planted > /dev/stdin; echo out > /dev/stdout; echo also >> /proc/self/fd/1`
		var out string
		if boxed {
			cfg := w.config()
			sandboxtest.Require(t, cfg)
			sb, err := corral.New(cfg)
			require.NoError(t, err)
			defer sb.Close()
			c := sb.Command(context.Background(), "sh", "-c", script)
			c.Stdin, c.Env = f, w.env()
			b, _ := c.Output()
			out = string(b)
		} else {
			c := exec.Command("sh", "-c", script)
			c.Stdin, c.Env, c.Dir = f, w.env(), w.ws
			b, _ := c.Output()
			out = string(b)
		}
		assert.Contains(t, out, "out\nalso\n")
		if boxed {
			assert.False(t, fileHas(in, "planted"), "a read-only stdin was written")
		} else {
			require.True(t, fileHas(in, "planted"), "the probe must write it without the sandbox")
		}
	}
}

// What cannot be staged is refused and reported: a protected name made as
// a symlink, a hard link or a FIFO. Ordinary files, links and FIFOs are
// made as usual, and a writer waiting on a FIFO holds up no other call.
func TestCreatedRefusedAndOrdinary(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()
	const script = `echo x > target; ln -s target .envrc; echo "symlink=$?"; ln target .mcp.json; echo "link=$?"; ` +
		`mkfifo .nvimrc; echo "fifo=$?"; ln -s target l && ln target h && mkfifo p && echo ordinary; ` +
		`(sleep 0.2; cat p) & echo through-fifo > p; wait; : > new && echo created`
	c := sb.Command(context.Background(), "sh", "-c", script)
	c.Env = w.env()
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, s := range []string{"symlink=1", "link=1", "fifo=1", "ordinary", "through-fifo", "created"} {
		assert.Contains(t, string(out), s)
	}
	dropped := strings.Join(c.Dropped(), "\n")
	for _, name := range []string{".envrc", ".mcp.json", ".nvimrc"} {
		assert.Contains(t, dropped, filepath.Join(w.ws, name)+": refused")
		assert.False(t, exists(filepath.Join(w.ws, name)))
	}
	assert.True(t, exists(filepath.Join(w.ws, "l")) && exists(filepath.Join(w.ws, "h")) && exists(filepath.Join(w.ws, "p")))

	control := newWorld(t)
	r := control.bare(script)
	require.Equal(t, 0, r.code, r.String())
	for _, name := range []string{".envrc", ".mcp.json", ".nvimrc"} {
		require.True(t, exists(filepath.Join(control.ws, name)), "without the sandbox %s is made", name)
	}
}
