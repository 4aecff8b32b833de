//go:build linux

package integration

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand"
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

// The ordinary workflows of issue 28: work an agent does every day on a
// workspace holding real repositories (delete and re-clone one, re-init
// .git, move a repository, add and remove a worktree, delete a vendor tree
// of nested repositories), and a command killed at any moment. Each runs
// in a real sandbox and is judged on the host: the command's status and
// output, every host repository valid (`git fsck --strict`, `git log`), and
// the end state the command asked for.

// busy is what rm prints when the sandbox's mounts make it fail.
const busy = "Device or resource busy"

// requireGit skips when the host has no git: the workflows are git's.
func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary on this host: " + err.Error())
	}
}

// flowWorld is a world whose data directory (read-only inside) holds src,
// a repository with three commits, to clone from.
func flowWorld(t *testing.T) *world {
	t.Helper()
	requireGit(t)
	w := newWorld(t)
	makeRepo(t, w, "data/src", "s", 3)
	return w
}

// flowConfig is the workspace, writable, with its data directory
// read-only; nothing is hidden, so `git add -A` sees plain files only.
func flowConfig(w *world) corral.Config {
	return corral.Config{Workspace: w.ws, ReadOnlyPaths: []string{w.data}}
}

// hostRun runs script on the host in the workspace as hostGit does and
// returns its combined output and exit status.
func hostRun(t *testing.T, w *world, script string) (string, int) {
	t.Helper()
	c := exec.Command("sh", "-c", gitEnv+script)
	c.Env = append(w.env(), "HOME="+w.outside)
	c.Dir = w.ws
	out, err := c.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			require.NoError(t, err)
		}
	}
	return string(out), c.ProcessState.ExitCode()
}

// makeRepo makes rel (relative to the workspace; "." is the workspace)
// a repository with n commits on the host, each adding a file named
// prefix+i and subject prefix+i.
func makeRepo(t *testing.T, w *world, rel, prefix string, n int) {
	t.Helper()
	script := fmt.Sprintf(`set -e; mkdir -p %q; cd %q; git init -q .; `+
		`i=1; while [ $i -le %d ]; do echo $i > %s$i; git add %s$i; git commit -q -m %s$i; i=$((i+1)); done`,
		rel, rel, n, prefix, prefix, prefix)
	out, code := hostRun(t, w, script)
	require.Equal(t, 0, code, "making the repository %s on the host: %s", rel, out)
}

// repoLog checks on the host that the repository at rel is valid (`git
// fsck --strict` exits 0, `git log` works) and returns its subjects,
// newest first.
func repoLog(t *testing.T, w *world, rel string) []string {
	t.Helper()
	log, problem := repoCheck(t, w, rel)
	require.Empty(t, problem, "the host's repository %s is valid", rel)
	return log
}

// repoCheck is repoLog's check, saying what is wrong instead of failing.
func repoCheck(t *testing.T, w *world, rel string) (log []string, problem string) {
	t.Helper()
	out, code := hostRun(t, w, fmt.Sprintf(`git -C %q fsck --strict --no-progress`, rel))
	if code != 0 {
		return nil, fmt.Sprintf("git fsck --strict of the host's %s exits %d: %s", rel, code, out)
	}
	out, code = hostRun(t, w, fmt.Sprintf(`git -C %q log --format=%%s`, rel))
	if code != 0 {
		return nil, fmt.Sprintf("git log in the host's %s exits %d: %s", rel, code, out)
	}
	return strings.Fields(out), ""
}

// assertGone checks that rel no longer exists on the host.
func assertGone(t *testing.T, w *world, rel string) {
	t.Helper()
	_, err := os.Lstat(filepath.Join(w.ws, rel))
	assert.True(t, os.IsNotExist(err), "the host's %s is gone (%v)", rel, err)
}

// TestWorkflowReclone deletes a repository that existed when the command
// started and clones it again in its place: the host holds a valid clone.
func TestWorkflowReclone(t *testing.T) {
	for _, tt := range []struct{ name, src, origin string }{
		{name: "local path in the workspace", src: "src", origin: "$WS/src"},
		{name: "file URL of a read-only path", src: "file://$DATA/src", origin: "file://$DATA/src"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := flowWorld(t)
			makeRepo(t, w, "src", "s", 3)
			makeRepo(t, w, "repo", "old", 2)
			r := w.sandboxed(flowConfig(w), gitEnv+`set -e; rm -rf repo && git clone -q "`+tt.src+`" repo && git -C repo log --format=%s`)
			require.Equal(t, 0, r.code, "%s", r)
			assert.NotContains(t, r.stderr, busy)
			assert.Equal(t, "s3\ns2\ns1\n", r.stdout)
			assert.Equal(t, []string{"s3", "s2", "s1"}, repoLog(t, w, "repo"), "the host's repo is the clone")
			out, code := hostRun(t, w, `git -C repo status --porcelain && git -C repo remote get-url origin && ls repo`)
			require.Equal(t, 0, code, out)
			origin := strings.NewReplacer("$WS", w.ws, "$DATA", w.data).Replace(tt.origin)
			assert.Equal(t, origin+"\ns1\ns2\ns3\n", out, "a clean clone, origin the source, the files checked out")
			assert.Equal(t, []string{"s3", "s2", "s1"}, repoLog(t, w, "data/src"), "the read-only source is intact")
			assert.Equal(t, []string{"s3", "s2", "s1"}, repoLog(t, w, "src"), "the source in the workspace is intact")
			assert.False(t, exists(filepath.Join(w.ws, "repo", "old1")), "nothing of the old repository is left")
		})
	}
}

// TestWorkflowReinit deletes .git and makes a new repository of the same
// tree: at the workspace's root (a worktree root holding .git) and in a
// nested repository.
func TestWorkflowReinit(t *testing.T) {
	for _, dir := range []string{".", "nested"} {
		t.Run(dir, func(t *testing.T) {
			w := flowWorld(t)
			makeRepo(t, w, ".", "w", 2)
			if dir != "." {
				makeRepo(t, w, dir, "n", 2)
			}
			r := w.sandboxed(flowConfig(w), gitEnv+`set -e; cd `+dir+` && rm -rf .git && git init -q && git add -A && git commit -q -m x && git log --format=%s`)
			require.Equal(t, 0, r.code, "%s", r)
			assert.NotContains(t, r.stderr, busy)
			assert.Equal(t, "x\n", r.stdout)
			assert.Equal(t, []string{"x"}, repoLog(t, w, dir), "the host's %s is the new repository", dir)
			out, code := hostRun(t, w, `cd `+dir+` && git status --porcelain && git ls-files | grep -c .`)
			require.Equal(t, 0, code, out)
			assert.NotEqual(t, "0\n", out, "the new commit holds the tree, and the tree is clean")
			assert.NotContains(t, out, "??", "everything is tracked")
			if dir != "." {
				assert.Equal(t, []string{"w2", "w1"}, repoLog(t, w, "."), "the workspace's own repository is intact")
			}
		})
	}
}

// TestWorkflowMove renames a repository and a directory holding .vscode,
// then works in the renamed repository.
func TestWorkflowMove(t *testing.T) {
	w := flowWorld(t)
	makeRepo(t, w, "repo", "r", 2)
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "proj", ".vscode"), 0o755))
	settings := `{"editor.tabSize": 2}`
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "proj", ".vscode", "settings.json"), []byte(settings), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "proj", "main.go"), []byte("package main\n"), 0o644))
	r := w.sandboxed(flowConfig(w), gitEnv+`set -e; mv repo repo2 && mv proj proj2
cd repo2 && echo n > new && git add new && git commit -q -m moved && git branch -m master main && git status --porcelain && git log --format=%s`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.NotContains(t, r.stderr, busy)
	assert.Equal(t, "moved\nr2\nr1\n", r.stdout)
	assertGone(t, w, "repo")
	assertGone(t, w, "proj")
	assert.Equal(t, []string{"moved", "r2", "r1"}, repoLog(t, w, "repo2"))
	out, code := hostRun(t, w, `git -C repo2 status --porcelain && git -C repo2 branch --show-current`)
	require.Equal(t, 0, code, out)
	assert.Equal(t, "main\n", out, "the renamed repository is clean, on the renamed branch")
	b, err := os.ReadFile(filepath.Join(w.ws, "proj2", ".vscode", "settings.json"))
	require.NoError(t, err, "the moved directory keeps its .vscode")
	assert.Equal(t, settings, string(b))
	assert.True(t, fileHas(filepath.Join(w.ws, "proj2", "main.go"), "package main"))
}

// TestWorkflowWorktree adds and removes a worktree next to the repository,
// both inside the workspace, and removes one the host made.
func TestWorkflowWorktree(t *testing.T) {
	for _, tt := range []struct{ name, setup, script string }{
		{name: "added and removed inside", script: `git worktree add -q ../wt && git -C ../wt log --format=%s -1 && git worktree remove ../wt`},
		{name: "made on the host, removed inside", setup: `git -C repo worktree add -q ../wt`,
			script: `git -C ../wt log --format=%s -1 && git worktree remove ../wt`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := flowWorld(t)
			makeRepo(t, w, "repo", "r", 2)
			if tt.setup != "" {
				out, code := hostRun(t, w, tt.setup)
				require.Equal(t, 0, code, out)
			}
			r := w.sandboxed(flowConfig(w), gitEnv+`set -e; cd repo && `+tt.script+` && git worktree list | wc -l`)
			require.Equal(t, 0, r.code, "%s", r)
			assert.NotContains(t, r.stderr, busy)
			assert.Equal(t, "r2\n1\n", strings.Join(strings.Fields(r.stdout), "\n")+"\n")
			assertGone(t, w, "wt")
			assert.Equal(t, []string{"r2", "r1"}, repoLog(t, w, "repo"))
			out, code := hostRun(t, w, `git -C repo worktree prune -n -v; git -C repo worktree list | wc -l; git -C repo branch --list wt | tr -d ' +*'`)
			require.Equal(t, 0, code, out)
			assert.Equal(t, "1\nwt\n", out, "the host's repository lists no worktree, nothing to prune, the branch stays")
		})
	}
}

// TestWorkflowDeleteVendor deletes a vendor tree holding several nested
// repositories and a .vscode.
func TestWorkflowDeleteVendor(t *testing.T) {
	w := flowWorld(t)
	makeRepo(t, w, ".", "w", 2)
	for _, rel := range []string{"vendor/a", "vendor/b", "vendor/c/d", "vendor/c/d/e"} {
		makeRepo(t, w, rel, "v", 2)
	}
	for _, rel := range []string{"vendor/.vscode", "vendor/b/.vscode", "vendor/c/.idea"} {
		require.NoError(t, os.MkdirAll(filepath.Join(w.ws, rel), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(w.ws, rel, "settings.json"), []byte("{}"), 0o644))
	}
	r := w.sandboxed(flowConfig(w), gitEnv+`rm -rf vendor && test ! -e vendor && echo gone`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.NotContains(t, r.stderr, busy)
	assert.Empty(t, r.stderr)
	assert.Equal(t, "gone\n", r.stdout)
	assertGone(t, w, "vendor")
	assert.Equal(t, []string{"w2", "w1"}, repoLog(t, w, "."), "the workspace's repository is intact")
}

// TestWorkflowDeleteProtectedNoEBUSY deletes a directory holding one
// protected entry: rm must not fail on it with EBUSY, and the directory is
// gone on the host.
func TestWorkflowDeleteProtectedNoEBUSY(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, w *world)
	}{
		{name: ".vscode", setup: func(t *testing.T, w *world) { mkFile(t, w, "dir/.vscode/tasks.json") }},
		{name: ".claude", setup: func(t *testing.T, w *world) { mkFile(t, w, "dir/.claude/settings.json") }},
		{name: ".mcp.json", setup: func(t *testing.T, w *world) { mkFile(t, w, "dir/.mcp.json") }},
		{name: "nested repository", setup: func(t *testing.T, w *world) { makeRepo(t, w, "dir/r", "n", 1) }},
		{name: "deep nested repository", setup: func(t *testing.T, w *world) { makeRepo(t, w, "dir/a/b/c/r", "n", 1) }},
		{name: "bare repository", setup: func(t *testing.T, w *world) {
			out, code := hostRun(t, w, `mkdir dir && git init -q --bare dir/r.git`)
			require.Equal(t, 0, code, out)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := flowWorld(t)
			makeRepo(t, w, ".", "w", 1)
			tt.setup(t, w)
			r := w.sandboxed(flowConfig(w), `rm -rf dir; echo "rm=$?"; test -e dir && echo left || echo gone`)
			assert.NotContains(t, r.stderr, busy)
			assert.Equal(t, "rm=0\ngone\n", r.stdout, "%s", r)
			require.Equal(t, 0, r.code, "%s", r)
			assertGone(t, w, "dir")
			assert.Equal(t, []string{"w1"}, repoLog(t, w, "."))
		})
	}
}

func mkFile(t *testing.T, w *world, rel string) {
	t.Helper()
	p := filepath.Join(w.ws, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("{}"), 0o644))
}

// killScript clones a repository into a new directory, fetches into one
// that existed, then commits in a loop in the workspace's repository and
// that one, until it is killed. A deletion of the command's own (rm -rf
// repo) killed halfway leaves what it had deleted, as on the host: the
// guard's promise is that nothing of its own (a stage, a merge) leaves a
// repository half-written.
const killScript = gitEnv + `git clone -q "$DATA/src" fresh
git -C repo fetch -q "$DATA/src" && git -C repo branch -f fetched FETCH_HEAD
i=0; while :; do i=$((i+1)); echo $i > f; git add f && git commit -q -m k$i; git -C repo commit -q --allow-empty -m r$i; done`

// hostRepos lists, relative to the workspace, every directory on the host
// holding a .git (a directory or a file) and every bare repository. What
// corral held aside (.corral-held) is its own record of what it dropped,
// not a repository of the user's, and is not listed.
func hostRepos(t *testing.T, root string) []string {
	t.Helper()
	var repos []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case rel == ".corral-held":
			return filepath.SkipDir
		case d.Name() == ".git":
			repos = append(repos, filepath.Dir(rel))
			if d.IsDir() {
				return filepath.SkipDir
			}
		case d.IsDir() && strings.HasSuffix(d.Name(), ".git") || d.IsDir() && exists(filepath.Join(p, "HEAD")) && exists(filepath.Join(p, "objects")):
			repos = append(repos, rel)
			return filepath.SkipDir
		}
		return nil
	}))
	return repos
}

// TestWorkflowKilledAnyMoment kills a command cloning and committing in
// the workspace after a delay from 0 to 300 ms, by the context, by
// Process.Kill and by a timeout: after each, every repository on the host
// is valid.
func TestWorkflowKilledAnyMoment(t *testing.T) {
	requireGit(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewSource(seed))
	const runs = 20
	for i := 0; i < runs+5; i++ {
		// Spread over 0-300 ms, each run somewhere in its own slot.
		slots, slot := runs, i
		if i >= runs {
			slots, slot = 5, i-runs
		}
		width := 300 * time.Millisecond / time.Duration(slots)
		delay := time.Duration(slot)*width + time.Duration(rnd.Int63n(int64(width)))
		how := []string{"cancel", "Process.Kill"}[i%2]
		if i >= runs {
			how = "timeout"
		}
		t.Run(fmt.Sprintf("%02d %s after %v", i, how, delay.Round(time.Millisecond)), func(t *testing.T) {
			w := flowWorld(t)
			makeRepo(t, w, ".", "w", 2)
			makeRepo(t, w, "repo", "r", 2)
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, ".gitignore"), []byte("repo/\nfresh/\n"), 0o644))
			cfg := flowConfig(w)
			sandboxtest.Require(t, cfg)
			sb, err := corral.New(cfg)
			require.NoError(t, err)
			defer sb.Close()
			var (
				ctx    context.Context
				cancel context.CancelFunc
			)
			if how == "timeout" {
				ctx, cancel = context.WithTimeout(context.Background(), delay)
			} else {
				ctx, cancel = context.WithCancel(context.Background())
			}
			defer cancel()
			c := sb.Command(ctx, "sh", "-c", killScript)
			c.Env = w.env()
			out := &syncBuffer{}
			c.Stdout, c.Stderr = out, out
			c.WaitDelay = 10 * time.Second
			if err := c.Start(); err != nil {
				// Only a timeout that ran out before the start may stop it.
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.Equal(t, "timeout", how)
				checkHostRepos(t, w)
				return
			}
			switch how {
			case "cancel":
				time.Sleep(delay)
				cancel()
			case "Process.Kill":
				time.Sleep(delay)
				require.NoError(t, c.Process.Kill())
			}
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				require.FailNow(t, "the killed command did not end")
			}
			assert.Error(t, err, "the command was killed: %s", out)
			t.Logf("wait: %v; output: %s", err, out)
			checkHostRepos(t, w)
		})
	}
}

// checkHostRepos checks that every repository on the host is valid, the
// workspace's own and the source still there.
func checkHostRepos(t *testing.T, w *world) {
	t.Helper()
	repos := hostRepos(t, w.ws)
	t.Logf("repositories on the host: %v", repos)
	require.Contains(t, repos, ".", "the workspace's repository is still there")
	require.Contains(t, repos, "data/src", "the source is still there")
	for _, rel := range repos {
		log, problem := repoCheck(t, w, rel)
		if problem != "" && (rel == "fresh" || rel == "repo") && cloneBegun(t, w, rel) {
			t.Logf("%s is a clone killed before its first commit landed, valid as git init's", rel)
			continue
		}
		if !assert.Empty(t, problem, "a repository on the host is broken") {
			// What it holds, for whoever mends it: whose history (k, r: the
			// loop's commits; s: the clone's), whose origin.
			out, _ := hostRun(t, w, fmt.Sprintf(`cd %q && tail -n 3 .git/logs/HEAD; echo "origin: $(git config remote.origin.url)"; `+
				`ls .git .git/refs/heads; find .git/objects -type f | wc -l`, rel))
			t.Logf("%s holds:\n%s", rel, out)
			continue
		}
		switch rel {
		case "data/src":
			assert.Equal(t, []string{"s3", "s2", "s1"}, log)
		case ".":
			assert.Subset(t, log, []string{"w2", "w1"}, "the workspace's history is kept")
		}
	}
}

// cloneBegun reports whether the host's rel is what git clone makes before
// it fetches: a valid repository with no commit whose origin is the source.
// What is left of the repository deleted before the clone is told apart by
// its origin (it had none).
func cloneBegun(t *testing.T, w *world, rel string) bool {
	t.Helper()
	out, code := hostRun(t, w, fmt.Sprintf(`cd %q && git fsck --strict --no-progress >/dev/null 2>&1 && `+
		`! git rev-parse -q --verify HEAD >/dev/null && git config remote.origin.url`, rel))
	return code == 0 && strings.TrimSpace(out) == filepath.Join(w.data, "src")
}

// TestWorkflowProtectionHolds plants a hook at the end of a workflow (a
// re-clone, a re-init, a move) and shows that the host's git does not run
// it; each plant is shown to work without the sandbox first.
func TestWorkflowProtectionHolds(t *testing.T) {
	hook := `printf '#!/bin/sh\ntouch "$MARK"\n' > "$1"; chmod +x "$1"`
	for _, tt := range []struct{ name, script, probe string }{
		{name: "re-clone", script: `rm -rf repo && git clone -q "$DATA/src" repo && set -- repo/.git/hooks/pre-commit && ` + hook, probe: "repo"},
		{name: "re-init", script: `rm -rf repo/.git && git -C repo init -q && set -- repo/.git/hooks/pre-commit && ` + hook, probe: "repo"},
		{name: "re-init the root", script: `rm -rf .git && git init -q && set -- .git/hooks/pre-commit && ` + hook, probe: "."},
		{name: "moved", script: `mv repo repo2 && set -- repo2/.git/hooks/pre-commit && ` + hook, probe: "repo2"},
		{name: "moved over", script: `mkdir e && git -C e init -q && set -- e/.git/hooks/pre-commit && ` + hook + ` && rm -rf repo && mv e repo`, probe: "repo"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := func(boxed bool) bool {
				w := flowWorld(t)
				makeRepo(t, w, ".", "w", 1)
				makeRepo(t, w, "repo", "r", 1)
				mark := filepath.Join(w.outside, "mark")
				w.vars = append(w.vars, "MARK="+mark)
				var r result
				if boxed {
					r = w.sandboxed(flowConfig(w), gitEnv+`set -e; `+tt.script)
				} else {
					r = w.bare(gitEnv + `set -e; ` + tt.script)
				}
				t.Logf("boxed=%v: %s", boxed, r)
				require.Equal(t, 0, r.code, "the workflow itself runs (boxed=%v): %s", boxed, r)
				require.False(t, exists(mark), "nothing ran yet")
				hostGit(t, w, `set -- "$WS/`+tt.probe+`"; `+hostProbe)
				return exists(mark)
			}
			require.True(t, run(false), "the probe must work without the sandbox")
			assert.False(t, run(true), "the host's git ran a hook planted by the command")
		})
	}
}
