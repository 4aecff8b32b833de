//go:build linux

package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// bareProbe is what the host's git (or an editor's background one) does in
// the directory r while the command still runs: a status (core.fsmonitor),
// an alias, a worktree added (the post-checkout hook). Each may fail; only
// whether $MARK appears counts.
const bareProbe = `cd r 2>/dev/null || exit 0; { git status; git x; ` +
	`git worktree add -q "$OUTSIDE/wt"; } >/dev/null 2>&1; true`

// Plants for the probe, in the config or hooks of the repository at r
// ($1 names the file).
const (
	plantAlias   = `printf '[alias]\n\tx = !touch "%s"\n' "$MARK" > "$1"`
	plantHook    = `printf '#!/bin/sh\ntouch "$MARK"\n' > "$1" && chmod +x "$1"`
	validHEAD    = `printf 'ref: refs/heads/master\n' > "$1"`
	withCommit   = `git clone -q r c && git -C c commit -q --allow-empty -m x && git -C c push -q origin HEAD`
	fsmonitorCfg = `mkdir wt && git -C r config core.bare false && git -C r config core.worktree "$WS/wt" && ` +
		`git -C r config core.fsmonitor 'touch "$MARK"; false'`
)

// A bare repository the command makes, in any order and by any route, is
// never one on the host while the command runs: the host's git there runs
// nothing the command planted (fsmonitor, a hook, an alias, through a
// commondir). Without the sandbox, or with .git allowed (AllowPlanting),
// the same probe runs the planted program.
func TestBareRepositoryNotLiveWhileRunning(t *testing.T) {
	cases := []struct {
		name, setup, script string
	}{
		{"fsmonitor", ``, `git init -q --bare r && ` + fsmonitorCfg},
		{"post-checkout hook", ``, `git init -q --bare r && ` + withCommit + ` && set -- r/hooks/post-checkout && ` + plantHook},
		{"commondir to a directory the command controls", ``,
			`mkdir -p t/objects t/refs r && set -- t/config && ` + plantAlias + ` && echo "$WS/t" > r/commondir && set -- r/HEAD && ` + validHEAD},
		{"config and hooks first, HEAD last", ``,
			`mkdir -p r/hooks r/objects r/refs && set -- r/config && ` + plantAlias + ` && set -- r/HEAD && ` + validHEAD},
		{"HEAD first", ``,
			`mkdir r && set -- r/HEAD && ` + validHEAD + ` && mkdir r/objects r/refs && set -- r/config && ` + plantAlias},
		{"HEAD saved by a rename", ``,
			`mkdir -p r/objects r/refs && set -- r/config && ` + plantAlias + ` && set -- h && ` + validHEAD + ` && mv h r/HEAD`},
		{"directory renamed into a repository", ``,
			`mkdir -p d/objects d/refs && set -- d/config && ` + plantAlias + ` && set -- d/HEAD && ` + validHEAD + ` && mv d r`},
		{"hooks renamed into place", ``,
			`git init -q --bare r && ` + withCommit + ` && mkdir h && set -- h/post-checkout && ` + plantHook + ` && rm -rf r/hooks && mv h r/hooks`},
		{"config renamed into place", ``,
			`git init -q --bare r && set -- c && ` + plantAlias + ` && mv c r/config`},
		{"existing directory with a config", `mkdir -p r/hooks && printf '[user]\n\tname = host\n' > r/config`,
			`set -- r/config && ` + plantAlias + ` && mkdir r/objects r/refs && set -- r/HEAD && ` + validHEAD},
		{"existing HEAD rewritten", `mkdir r && echo notes > r/HEAD`,
			`mkdir r/objects r/refs && set -- r/config && ` + plantAlias + ` && { set -- r/HEAD && ` + validHEAD + `; } 2>/dev/null; true`},
		{"existing HEAD, objects and refs added", `mkdir r && printf 'ref: refs/heads/master\n' > r/HEAD`,
			`mkdir r/objects r/refs && set -- r/config && ` + plantAlias},
		{"existing repository's commondir", `mkdir -p t/objects t/refs r && printf 'ref: refs/heads/master\n' > r/HEAD && echo "$WS/t" > r/commondir`,
			`set -- t/config && ` + plantAlias},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []string{"bare", "allowed", "boxed"} {
				w := newWorld(t)
				mark := filepath.Join(w.outside, "mark")
				w.vars = append(w.vars, "MARK="+mark)
				if c.setup != "" {
					hostGit(t, w, c.setup)
				}
				var cfg *corral.Config
				if mode != "bare" {
					cc := w.config()
					if mode == "allowed" {
						cc.AllowPlanting = []string{".git"}
					}
					cfg = &cc
				}
				whileRunning(t, w, cfg, c.script, func() {
					hostGit(t, w, bareProbe)
					if mode == "boxed" {
						assert.False(t, exists(mark), "the host's git ran what the command planted while it runs")
					} else {
						assert.True(t, exists(mark), "%s: the probe must run the planted program", mode)
					}
				})
			}
		})
	}
}

// What lands when the command exits: a repository it made is rebuilt from
// its allowed parts, config with a key that runs a program and hooks
// dropped and reported; a HEAD in a directory that is no repository (git
// does not take it, or there are no objects and refs) lands as it is.
func TestBareRepositoryLandsAtExit(t *testing.T) {
	w := newWorld(t)
	mark := filepath.Join(w.outside, "mark")
	w.vars = append(w.vars, "MARK="+mark)
	cfg := w.config()
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()
	script := gitEnv + `git init -q --bare r && ` + withCommit + ` && set -- r/hooks/post-checkout && ` + plantHook +
		` && git -C r config alias.x '!touch "$MARK"' && mkdir n && echo notes > n/HEAD && ` +
		`mkdir half && printf 'ref: refs/heads/master\n' > half/HEAD`
	c := sb.Command(context.Background(), "sh", "-c", script)
	c.Env = w.env()
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	dropped := strings.Join(c.Dropped(), "\n")
	r := filepath.Join(w.ws, "r")
	assert.Contains(t, dropped, r+": new repository, kept what is allowed")
	assert.Contains(t, dropped, r+"/config: changes keys that are not allowed: alias.x")
	assert.Contains(t, dropped, r+"/hooks")
	assert.NotContains(t, dropped, filepath.Join(w.ws, "n"), "a HEAD outside a repository lands as it is")
	assert.True(t, fileHas(filepath.Join(w.ws, "n/HEAD"), "notes"))
	assert.NotContains(t, dropped, filepath.Join(w.ws, "half"), "a HEAD in a directory without objects and refs lands as it is")
	assert.True(t, fileHas(filepath.Join(w.ws, "half/HEAD"), "refs/heads/master"))

	hostGit(t, w, bareProbe)
	assert.False(t, exists(mark), "the host's git ran what the command planted")
	log := hostGit(t, w, `git -C r log --oneline`)
	assert.Contains(t, log, " x", "the repository landed: %s", log)
}

// git init --bare, clone --bare, clone, push, log and worktree add work
// inside on a bare repository made there, and the result is on the host when the command
// exits, with nothing dropped.
func TestBareRepositoryWorkflow(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()
	script := gitEnv + `git init -q --bare bare.git && git clone -q bare.git cl && cd cl && echo one > f && ` +
		`git add f && git commit -q -m one && git push -q origin HEAD && echo two >> f && git commit -q -am two && ` +
		`git push -q origin HEAD && cd .. && git -C bare.git log --oneline && git clone -q --bare bare.git copy.git && ` +
		`git -C copy.git log --oneline && git -C bare.git symbolic-ref HEAD refs/heads/master && ` +
		`git -C bare.git worktree add -q ../wt && git -C wt log --oneline`
	c := sb.Command(context.Background(), "sh", "-c", script)
	c.Env = w.env()
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, 3, strings.Count(string(out), " two"), string(out))
	assert.Empty(t, c.Dropped())

	log := hostGit(t, w, `git -C bare.git log --oneline && git -C copy.git log --oneline && git -C wt log --oneline && `+
		`git clone -q bare.git c2 && cat c2/f`)
	assert.Equal(t, 3, strings.Count(log, " two"), log)
	assert.Contains(t, log, "one\ntwo\n")
	_, err = os.Stat(filepath.Join(w.ws, ".corral-held"))
	assert.True(t, os.IsNotExist(err), "nothing was held")
}

// A workspace the command turns into a repository itself (HEAD, objects/
// and refs/ at its top) is none on the host while the command runs, and its
// HEAD, which cannot be moved with its directory, is held when it exits.
func TestBareRepositoryAtTheTop(t *testing.T) {
	const script = `mkdir objects refs && set -- config && ` + plantAlias + ` && set -- HEAD && ` + validHEAD
	probe := `{ git x; } >/dev/null 2>&1; true`
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		mark := filepath.Join(w.outside, "mark")
		w.vars = append(w.vars, "MARK="+mark)
		var cfg *corral.Config
		if boxed {
			cc := w.config()
			cfg = &cc
		}
		whileRunning(t, w, cfg, script, func() {
			hostGit(t, w, probe)
			if boxed {
				assert.False(t, exists(mark), "the host's git ran what the command planted while it runs")
			} else {
				assert.True(t, exists(mark), "the probe must run the planted program")
			}
		})
		if boxed {
			hostGit(t, w, probe)
			assert.False(t, exists(mark), "the host's git ran what the command planted after it exited")
			assert.False(t, exists(filepath.Join(w.ws, "HEAD")), "HEAD is held")
		}
	}
}

// placeholderRacer races the staging of a new protected entry: one thread
// opens, without O_CREAT (which the init does not perform), the name
// another thread is about to create, hoping for the host's placeholder
// before the staged file or tmpfs covers it, and writes through it: a valid
// HEAD into "file" mode's file (beside objects, refs and a config), a task
// into "dir" mode's .vscode.
const placeholderRacer = `#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static volatile int stop;
static char name[64];
static int dirmode;
static void *grab(void *x) {
	while (!stop) {
		int fd = open(name, dirmode ? O_RDONLY | O_DIRECTORY : O_WRONLY);
		if (fd < 0)
			continue;
		if (dirmode) {
			int c = openat(fd, "tasks.json", O_CREAT | O_WRONLY, 0644);
			if (c >= 0) {
				dprintf(c, "planted\n");
				close(c);
			}
		} else {
			write(fd, "ref: refs/heads/master\n", 23);
		}
		close(fd);
		stop = 1;
	}
	return x;
}
int main(int argc, char **argv) {
	dirmode = argv[1][0] == 'd';
	for (int i = 0; i < 150; i++) {
		snprintf(name, sizeof name, dirmode ? "r%d/.vscode" : "r%d/HEAD", i);
		char dir[64];
		snprintf(dir, sizeof dir, "r%d", i);
		mkdir(dir, 0755);
		if (!dirmode) {
			snprintf(dir, sizeof dir, "r%d/objects", i);
			mkdir(dir, 0755);
			snprintf(dir, sizeof dir, "r%d/refs", i);
			mkdir(dir, 0755);
			snprintf(dir, sizeof dir, "r%d/config", i);
			FILE *c = fopen(dir, "w");
			fprintf(c, "[alias]\n\tx = !touch %s\n", getenv("MARK"));
			fclose(c);
		}
		stop = 0;
		pthread_t t;
		pthread_create(&t, 0, grab, 0);
		usleep(200);
		if (dirmode)
			mkdir(name, 0755);
		else
			close(open(name, O_CREAT | O_WRONLY, 0644));
		usleep(2000);
		stop = 1;
		pthread_join(t, 0);
	}
	return 0;
}
`

// A thread that opens the name another creates, before the staging covers
// it, gets no placeholder it can write to the host through: a staged
// file's is a socket node, and what is made in a staged directory's is
// staged too. So the host's git finds no repository the command made, and
// no task reaches a .vscode, while it runs; without the sandbox both do.
func TestStagingPlaceholderRace(t *testing.T) {
	for _, mode := range []string{"file", "dir"} {
		t.Run(mode, func(t *testing.T) {
			for _, boxed := range []bool{false, true} {
				w := newWorld(t)
				mark := filepath.Join(w.outside, "mark")
				w.vars = append(w.vars, "MARK="+mark)
				buildC(t, "racer", placeholderRacer, w.ws)
				var cfg *corral.Config
				if boxed {
					c := w.config()
					cfg = &c
				}
				whileRunning(t, w, cfg, `./racer `+mode, func() {
					hostGit(t, w, `for d in r*; do (cd "$d" && git x) >/dev/null 2>&1; done; `+
						`grep -qs planted r*/.vscode/tasks.json && touch "$MARK"; true`)
					if boxed {
						assert.False(t, exists(mark), "a racing thread wrote through a placeholder to the host")
					} else {
						assert.True(t, exists(mark), "the probe must find what was written without the sandbox")
					}
				})
			}
		})
	}
}
