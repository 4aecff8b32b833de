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
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// gitEnv makes git in probes ignore the user's own configuration and know
// who commits.
const gitEnv = `export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com ` +
	`GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com; `

// hostGit runs script on the host in dir, as the user's own tools would
// after the command: with HOME outside the workspace.
func hostGit(t *testing.T, w *world, script string) string {
	t.Helper()
	c := exec.Command("sh", "-c", gitEnv+script)
	c.Env = append(w.env(), "HOME="+w.outside)
	c.Dir = w.ws
	out, _ := c.CombinedOutput()
	return string(out)
}

// initRepo makes ws a repository with one commit, on the host.
func initRepo(t *testing.T, w *world) {
	t.Helper()
	out := hostGit(t, w, `git init -q . && git commit -q --allow-empty -m init && git rev-parse HEAD`)
	require.Len(t, strings.TrimSpace(out), 40, out)
}

// hostProbe is what a user's tools run on the host afterwards in dir: a
// status (fsmonitor), a checkout of the index (its entries), the
// continuation of a rebase, cherry-pick or am left in progress (their
// options), a commit (hooks), an alias, a fetch (sshCommand, transports).
// Each may fail; only whether $MARK appears counts.
const hostProbe = `cd "$1" 2>/dev/null || exit 0; export GIT_EDITOR=true; git status >/dev/null 2>&1; ` +
	`git checkout -q -- . >/dev/null 2>&1; git rebase --continue >/dev/null 2>&1; ` +
	`git cherry-pick --continue >/dev/null 2>&1; git am --continue >/dev/null 2>&1; ` +
	`git commit -q --allow-empty -m probe >/dev/null 2>&1; git x >/dev/null 2>&1; ` +
	`timeout 10 git fetch -q origin >/dev/null 2>&1; true`

type gitAttack struct {
	name   string
	setup  string // run on the host before, in the workspace
	script string // the command
	probe  string // where the host probe runs, relative to the workspace
	// planted, when set, replaces the git probe: the path an editor or
	// agent would load.
	planted string
	// leaked, when set, is what the git probe must not write: a path and
	// the content hidden from the command.
	leaked string
}

func gitAttacks() []gitAttack {
	hook := `printf '#!/bin/sh\ntouch "$MARK"\n' > "$1"; chmod +x "$1"`
	return []gitAttack{
		{name: "hook", script: `set -- .git/hooks/pre-commit; ` + hook, probe: "."},
		{name: "hooksPath", script: `mkdir h; set -- h/pre-commit; ` + hook + `; git config core.hooksPath "$WS/h"`, probe: "."},
		{name: "fsmonitor", script: `git config core.fsmonitor 'touch "$MARK"; false'`, probe: "."},
		{name: "alias", script: `git config alias.x '!touch "$MARK"'`, probe: "."},
		{name: "sshCommand", script: `git remote add origin ssh://example.invalid/r && git config core.sshCommand 'touch "$MARK"; false'`, probe: "."},
		{name: "ext transport", script: `git remote add origin 'ext::sh -c touch% $MARK' && git config protocol.ext.allow always`, probe: "."},
		{name: "include", script: `printf '[core]\n\tfsmonitor = touch %s; false\n' "$MARK" > inc && git config include.path "$WS/inc"`, probe: "."},
		{name: "commondir", script: `git init -q e && git -C e config core.fsmonitor 'touch "$MARK"; false' && echo "$WS/e/.git" > .git/commondir`, probe: "."},
		{name: "config.worktree", script: `git config extensions.worktreeConfig true && printf '[core]\n\tfsmonitor = touch %s; false\n' "$MARK" > .git/config.worktree`, probe: "."},
		{name: "worktree config.worktree", setup: `git worktree add -q wt`,
			script: `git config extensions.worktreeConfig true && printf '[core]\n\tfsmonitor = touch %s; false\n' "$MARK" > .git/worktrees/wt/config.worktree`, probe: "wt"},
		{name: "worktree commondir", setup: `git worktree add -q wt`,
			script: `git init -q e && git -C e config core.fsmonitor 'touch "$MARK"; false' && echo "$WS/e/.git" > .git/worktrees/wt/commondir`, probe: "wt"},
		{name: "worktree gitdir", setup: `git worktree add -q wt`,
			script: `git init -q e && git -C e config core.fsmonitor 'touch "$MARK"; false' && echo "gitdir: $WS/e/.git" > wt/.git`, probe: "wt"},
		{name: "submodule config", setup: `mkdir -p .git/modules && git init -q --separate-git-dir "$WS/.git/modules/sub" sub`,
			script: `git -C sub config core.fsmonitor 'touch "$MARK"; false'`, probe: "sub"},
		{name: "submodule hook", setup: `mkdir -p .git/modules && git init -q --separate-git-dir "$WS/.git/modules/sub" sub`,
			script: `set -- .git/modules/sub/hooks/pre-commit; ` + hook, probe: "sub"},
		{name: "git file to a git dir in the workspace", setup: `git init -q --separate-git-dir "$WS/gd" x`,
			script: `git -C x config core.fsmonitor 'touch "$MARK"; false'`, probe: "x"},
		{name: "new git file", script: `mkdir x && git init -q --separate-git-dir "$WS/gd" x && git -C x config core.fsmonitor 'touch "$MARK"; false'`, probe: "x"},
		{name: "git symlink", setup: `git init -q --bare real.git && git -C real.git config core.bare false && mkdir y && ln -s ../real.git y/.git`,
			script: `git -C y config core.fsmonitor 'touch "$MARK"; false'`, probe: "y"},
		{name: "git symlink retargeted", setup: `git init -q --bare real.git && git -C real.git config core.bare false && mkdir y && ln -s ../real.git y/.git`,
			script: `git init -q e && git -C e config core.fsmonitor 'touch "$MARK"; false' && ln -sfn "$WS/e/.git" y/.git`, probe: "y"},
		{name: "new repository", script: `mkdir n && git -C n init -q && git -C n config core.fsmonitor 'touch "$MARK"; false' && set -- n/.git/hooks/pre-commit && ` + hook, probe: "n"},
		{name: "nested repository hook", setup: `git init -q nested && git -C nested commit -q --allow-empty -m n`,
			script: `set -- nested/.git/hooks/pre-commit; ` + hook, probe: "nested"},
		{name: "nested repository config", setup: `git init -q nested`,
			script: `git -C nested config core.fsmonitor 'touch "$MARK"; false'`, probe: "nested"},
		{name: "index entry in .git", script: `mkdir -p xgit/hooks; set -- xgit/hooks/pre-commit; ` + hook + `; git add xgit && ` +
			`perl -0777 -i -pe 'use Digest::SHA qw(sha1); s#xgit/hooks/pre-commit#.git/hooks/pre-commit#; $_ = substr($_, 0, -20); $_ .= sha1($_)' .git/index && rm -rf xgit`,
			probe: "."},
		{name: "index entry in .git, version 4", script: `mkdir -p xgit/hooks; set -- xgit/hooks/pre-commit; ` + hook + `; git add xgit && ` +
			`git update-index --index-version 4 && ` +
			`perl -0777 -i -pe 'use Digest::SHA qw(sha1); s#xgit/hooks/pre-commit#.git/hooks/pre-commit#; $_ = substr($_, 0, -20); $_ .= sha1($_)' .git/index && rm -rf xgit`,
			probe: "."},
		{name: "rebase strategy", setup: `echo 1 > f && git add f && git commit -qm b && echo 2 > g && git add g && git commit -qm c`,
			script: `GIT_SEQUENCE_EDITOR="sed -i -e 1s/^pick/drop/ -e 1ibreak" git rebase -q -i HEAD~2; ` +
				`mkdir git-merge-..; set -- x; ` + hook + `; echo ../../x > .git/rebase-merge/strategy`, probe: "."},
		{name: "rebase strategy options", setup: `echo 1 > f && git add f && git commit -qm b && echo 2 > g && git add g && git commit -qm c`,
			script: `GIT_SEQUENCE_EDITOR="sed -i -e 1s/^pick/drop/ -e 1ibreak" git rebase -q -i HEAD~2; ` +
				`echo resolve > .git/rebase-merge/strategy; printf "'--index-output=%s'" "$MARK" > .git/rebase-merge/strategy_opts`, probe: "."},
		{name: "cherry-pick strategy", setup: `git checkout -q -b side && echo 1 > f && git add f && git commit -qm b && ` +
			`echo 2 > f && git commit -qam c && echo 3 > g && git add g && git commit -qm d && git checkout -q - && ` +
			`echo 0 > f && git add f && git commit -qm x`,
			script: `git cherry-pick side~1 side >/dev/null 2>&1; git config -f .git/sequencer/opts options.strategy ../../x; ` +
				`mkdir git-merge-..; set -- x; ` + hook + `; echo 2 > f; git add f`, probe: "."},
		{name: "am apply options", setup: `echo base > f && git add f && git commit -qm a && echo one > f && git commit -qam b && ` +
			`echo two > g && git add g && git commit -qm c && git format-patch -q -2 -o p && git reset -q --hard HEAD~2 && ` +
			`echo conflict > f && git commit -qam x`,
			script: `git am -q p/*.patch >/dev/null 2>&1; printf "'--build-fake-ancestor=%s'" "$MARK" > .git/rebase-apply/apply-opt; ` +
				`echo one > f; git add f`, probe: "."},
		{name: "rerere copies a hidden file", script: `id=0123456789012345678901234567890123456789; mkdir -p .git/rr-cache/$id && ` +
			`printf '%s\tsecret/token\0' $id > .git/MERGE_RR`,
			probe: ".", leaked: ".git/rr-cache/0123456789012345678901234567890123456789/postimage:s3cr3t-payload"},
		{name: "new .vscode/tasks.json", script: `mkdir .vscode && echo '{"tasks":[]}' > .vscode/tasks.json`, planted: ".vscode/tasks.json"},
		{name: "new nested .vscode", script: `mkdir -p a/b/.vscode && echo '{}' > a/b/.vscode/tasks.json`, planted: "a/b/.vscode/tasks.json"},
		{name: "new .claude/settings.json", script: `mkdir .claude && echo '{"hooks":{}}' > .claude/settings.json`, planted: ".claude/settings.json"},
		{name: "new .mcp.json", script: `echo '{"mcpServers":{}}' > .mcp.json`, planted: ".mcp.json"},
		{name: "existing .claude", setup: `mkdir .claude && echo '{}' > .claude/settings.json`,
			script: `echo '{"hooks":1}' > .claude/settings.json`, planted: ".claude/settings.json:hooks"},
		{name: "moved aside .vscode", setup: `mkdir -p s/.vscode && echo '{}' > s/.vscode/tasks.json`,
			script: `mv s s2 && mkdir -p s/.vscode && echo '{"evil":1}' > s/.vscode/tasks.json`, planted: "s/.vscode/tasks.json:evil"},
		{name: "new .envrc", script: `echo 'touch x' > .envrc`, planted: ".envrc"},
		{name: "new nested .npmrc", script: `mkdir -p pkg && echo 'script-shell=/tmp/evil' > pkg/.npmrc`, planted: "pkg/.npmrc"},
		{name: "new .yarnrc.yml", script: `echo 'yarnPath: evil.js' > .yarnrc.yml`, planted: ".yarnrc.yml"},
		{name: "new .pre-commit-config.yaml", script: `printf 'repos:\n- repo: local\n  hooks:\n  - {id: x, name: x, entry: touch /tmp/x, language: system}\n' > .pre-commit-config.yaml`, planted: ".pre-commit-config.yaml"},
		{name: "existing .pre-commit-config.yaml", setup: `echo 'repos: []' > .pre-commit-config.yaml`,
			script: `echo 'repos: [{repo: local, hooks: [{id: evil, name: e, entry: touch /tmp/x, language: system}]}]' > .pre-commit-config.yaml`, planted: ".pre-commit-config.yaml:evil"},
		{name: "new .husky hook", script: `mkdir .husky && printf '#!/bin/sh\ntouch /tmp/x\n' > .husky/pre-commit`, planted: ".husky/pre-commit"},
		{name: "new lefthook.yml", script: `echo 'pre-commit: {commands: {x: {run: touch /tmp/x}}}' > lefthook.yml`, planted: "lefthook.yml"},
		{name: "existing .npmrc", setup: `echo 'fund=false' > .npmrc`,
			script: `echo 'script-shell=/tmp/evil' > .npmrc`, planted: ".npmrc:script-shell"},
	}
}

// TestGitAndEditorPlanting plants, by every route git, editors and agents
// load code from, something a host tool would run afterwards; each route is
// shown to work without the sandbox first.
func TestGitAndEditorPlanting(t *testing.T) {
	for _, a := range gitAttacks() {
		t.Run(a.name, func(t *testing.T) {
			run := func(boxed bool) bool {
				w := newWorld(t)
				initRepo(t, w)
				mark := filepath.Join(w.outside, "mark")
				w.vars = append(w.vars, "MARK="+mark)
				if a.setup != "" {
					out := hostGit(t, w, a.setup)
					require.NotContains(t, out, "fatal", out)
				}
				var r result
				if boxed {
					r = w.sandboxed(w.config(), gitEnv+a.script)
				} else {
					r = w.bare(gitEnv + a.script)
				}
				if a.planted != "" {
					p, want, _ := strings.Cut(a.planted, ":")
					return fileHas(filepath.Join(w.ws, p), want)
				}
				hostGit(t, w, `set -- "$WS/`+a.probe+`"; `+hostProbe)
				t.Logf("boxed=%v: %s", boxed, r)
				if a.leaked != "" {
					p, want, _ := strings.Cut(a.leaked, ":")
					return fileHas(filepath.Join(w.ws, p), want)
				}
				return exists(mark)
			}
			require.True(t, run(false), "the probe must work without the sandbox")
			assert.False(t, run(true), "planted something the host runs (or, leaked, copies)")
		})
	}
}

// TestGitWorkflowInside runs ordinary git work in a sandbox and checks that
// all of it lands in the host's repository.
func TestGitWorkflowInside(t *testing.T) {
	w := newWorld(t)
	initRepo(t, w)
	script := gitEnv + `set -e
echo a > f && git add f && git commit -q -m one
git branch feature && git branch -m feature topic
git tag v1
echo b > f && git stash -q && git stash pop -q && git commit -qam two
git checkout -q topic && echo c > g && git add g && git commit -qm three
git rebase -q master
git checkout -q master && git merge -q --no-edit topic
git config user.name "Some One"
git remote add origin https://example.invalid/r.git
git worktree add -q wt2 topic 2>/dev/null || git worktree add -q wt2 -b wt2
git gc -q
git status --short
`
	r := w.sandboxed(w.config(), script)
	require.Equal(t, 0, r.code, "%s", r)
	fsck := hostGit(t, w, `git fsck --no-progress --no-dangling 2>&1`)
	assert.Empty(t, strings.TrimSpace(fsck), "the host's repository is consistent")
	out := hostGit(t, w, `git log --format=%s master | tr '\n' ' '; echo; `+
		`git branch --list | tr -d ' *+' | tr '\n' ' '; echo; git tag; git config user.name; git remote get-url origin; `+
		`git -C wt2 rev-parse --is-inside-work-tree; git stash list | wc -l`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 7, out)
	assert.Equal(t, "three two one init", strings.TrimSpace(lines[0]))
	assert.Contains(t, lines[1], "topic")
	assert.NotContains(t, lines[1], "feature")
	assert.Equal(t, []string{"v1", "Some One", "https://example.invalid/r.git", "true", "0"}, lines[2:])
	_, err := os.Stat(filepath.Join(w.ws, ".corral-held"))
	assert.True(t, os.IsNotExist(err), "nothing was held")
}

// TestPlantingThenKilled plants and then hangs until the caller's context
// ends it: what it planted is still held, as after a command that exits.
func TestPlantingThenKilled(t *testing.T) {
	const script = `mkdir .vscode && echo '{}' > .vscode/tasks.json && git config core.fsmonitor 'touch "$MARK"; false' && touch ready && exec sleep 600`
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		initRepo(t, w)
		mark := filepath.Join(w.outside, "mark")
		w.vars = append(w.vars, "MARK="+mark)
		if !boxed {
			c := exec.Command("sh", "-c", gitEnv+strings.Replace(script, "exec sleep 600", "true", 1))
			c.Env, c.Dir = w.env(), w.ws
			require.NoError(t, c.Run())
		} else {
			cfg := w.config()
			sandboxtest.Require(t, cfg)
			sb, err := corral.New(cfg)
			require.NoError(t, err)
			defer sb.Close()
			ctx, cancel := context.WithCancel(context.Background())
			c := sb.Command(ctx, "sh", "-c", gitEnv+script)
			c.Env = w.env()
			require.NoError(t, c.Start())
			require.Eventually(t, func() bool { return exists(filepath.Join(w.ws, "ready")) },
				20*time.Second, 20*time.Millisecond, "the command planted")
			assert.False(t, exists(filepath.Join(w.ws, ".vscode/tasks.json")), "the new entry is staged while the command runs")
			cancel()
			assert.Error(t, c.Wait())
			assert.NotEmpty(t, c.Dropped(), "what was dropped is reported")
		}
		hostGit(t, w, `set -- "$WS"; `+hostProbe)
		planted := exists(filepath.Join(w.ws, ".vscode/tasks.json")) || exists(mark)
		if !boxed {
			require.True(t, planted, "the probe must work without the sandbox")
		} else {
			assert.False(t, planted, "planted by a command that was killed")
		}
	}
}

// TestGitWorkflowForeignGroup works in a repository whose .git entries
// belong to a group the sandbox's user namespace does not map (a group
// the user is in besides its primary one, as in a repository shared
// through a group): the staging copies what git changes, and overlayfs
// cannot give such a copy its group. Files git did not change keep their
// group on the host.
func TestGitWorkflowForeignGroup(t *testing.T) {
	gid := 4242 // root may give any group
	if os.Geteuid() != 0 {
		groups, err := os.Getgroups()
		require.NoError(t, err)
		gid = -1
		for _, g := range groups {
			if g != os.Getgid() {
				gid = g
			}
		}
		if gid < 0 {
			t.Skip("the user is in no group besides its primary one")
		}
	}
	w := newWorld(t)
	initRepo(t, w)
	gitDir := filepath.Join(w.ws, ".git")
	require.NoError(t, filepath.Walk(gitDir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, -1, gid)
	}))
	script := gitEnv + `set -e
echo a > f && git add f && git commit -q -m one
git branch -m master main
git tag v1
git config user.name "Some One"
git status --short
`
	r := w.sandboxed(w.config(), script)
	require.Equal(t, 0, r.code, "%s", r)
	fsck := hostGit(t, w, `git fsck --no-progress --no-dangling 2>&1`)
	assert.Empty(t, strings.TrimSpace(fsck), "the host's repository is consistent")
	out := hostGit(t, w, `git log --format=%s main | tr '\n' ' '; echo; git tag; git config user.name`)
	assert.Equal(t, "one init \nv1\nSome One\n", out)
	var st unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(gitDir, "description"), &st))
	assert.EqualValues(t, gid, st.Gid, "a file git did not change is not rewritten")
}

// TestGitStateLands leaves inside what ordinary git work leaves, in the
// forms the merge checks (an index of version 4, a split index, a rebase,
// cherry-pick or am stopped halfway with options of git's own), and
// finishes it on the host: nothing is dropped, and git on the host takes
// it up.
func TestGitStateLands(t *testing.T) {
	for _, tt := range []struct {
		name, setup, script, host string
	}{
		{name: "index forms",
			script: `echo h > h && git add h && git update-index --index-version 4 && git commit -qm h && ` +
				`git update-index --split-index && echo i > i && git add i && git commit -qm i && echo j > j && git add j`,
			host: `git ls-files | tr '\n' ' '; git status --porcelain -uno`},
		{name: "rebase", setup: `echo 1 > f && git add f && git commit -qm b && echo 2 > g && git add g && git commit -qm c`,
			script: `GIT_SEQUENCE_EDITOR="sed -i -e 1s/^pick/drop/ -e 1ibreak" git rebase -q -i -s ort HEAD~2`,
			host:   `GIT_EDITOR=true git rebase --continue >/dev/null 2>&1 || echo failed; git log --format=%s | tr '\n' ' '`},
		{name: "cherry-pick", setup: `git checkout -q -b side && echo 1 > f && git add f && git commit -qm b && ` +
			`echo 2 > f && git commit -qam c && echo 3 > g && git add g && git commit -qm d && git checkout -q - && ` +
			`echo 0 > f && git add f && git commit -qm x`,
			script: `git cherry-pick --strategy=ort -Xpatience side~1 side >/dev/null 2>&1; echo 2 > f && git add f`,
			host:   `GIT_EDITOR=true git cherry-pick --continue >/dev/null 2>&1 || echo failed; git log --format=%s | tr '\n' ' '`},
		{name: "am", setup: `echo base > f && git add f && git commit -qm a && echo one > f && git commit -qam b && ` +
			`echo two > g && git add g && git commit -qm c && git format-patch -q -2 -o p && git reset -q --hard HEAD~2 && ` +
			`echo conflict > f && git commit -qam x`,
			script: `git am -q --whitespace=fix -C1 --directory= p/*.patch >/dev/null 2>&1; echo one > f && git add f`,
			host:   `git am --continue >/dev/null 2>&1 || echo failed; git log --format=%s | tr '\n' ' '`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			initRepo(t, w)
			if tt.setup != "" {
				out := hostGit(t, w, tt.setup)
				require.NotContains(t, out, "fatal", out)
			}
			cfg := w.config()
			sandboxtest.Require(t, cfg)
			sb, err := corral.New(cfg)
			require.NoError(t, err)
			defer sb.Close()
			c := sb.Command(context.Background(), "sh", "-c", gitEnv+tt.script)
			c.Env = w.env()
			out, err := c.CombinedOutput()
			require.NoError(t, err, string(out))
			assert.Empty(t, c.Dropped())
			got := hostGit(t, w, tt.host)
			assert.NotContains(t, got, "failed")
			switch tt.name {
			case "index forms":
				assert.Equal(t, "h i j A j", strings.Join(strings.Fields(got), " "))
			case "rebase":
				assert.Equal(t, "c init", strings.TrimSpace(got))
			case "cherry-pick":
				assert.Equal(t, "d c x init", strings.TrimSpace(got))
			case "am":
				assert.Equal(t, "c b x a init", strings.TrimSpace(got))
			}
		})
	}
}
