package guard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	for rel, want := range map[string]class{
		"HEAD":                                 plain,
		"index":                                gitIndex,
		"sharedindex.0123":                     gitIndex,
		"modules/sub/index":                    gitIndex,
		"worktrees/wt/index":                   gitIndex,
		"objects/ab/cdef":                      plain,
		"objects/pack/pack-1.pack":             plain,
		"objects/info/alternates":              dropped,
		"refs/heads/main":                      plain,
		"refs/heads/main.lock":                 dropped,
		"logs/HEAD":                            plain,
		"config":                               config,
		"config.worktree":                      dropped,
		"commondir":                            dropped,
		"hooks/pre-commit":                     dropped,
		"info/exclude":                         plain,
		"info/other":                           dropped,
		"rebase-merge/git-rebase-todo":         todo,
		"rebase-merge/head-name":               plain,
		"worktrees/wt/HEAD":                    plain,
		"worktrees/wt/gitdir":                  wtGitdir,
		"worktrees/wt/commondir":               wtCommondir,
		"worktrees/wt/config":                  dropped,
		"worktrees/wt/config.worktree":         dropped,
		"worktrees/wt/hooks/pre-commit":        dropped,
		"modules/sub/config":                   config,
		"modules/sub/hooks/pre-commit":         dropped,
		"modules/sub/objects/ab/cd":            plain,
		"modules/sub/modules/deeper/HEAD":      plain,
		"modules/sub/worktrees/w/gitdir":       wtGitdir,
		"modules/a/refs/hooks/pre-commit":      dropped, // a hook of module "a/refs"
		"modules/a/refs/config":                dropped, // the config of module "a/refs"
		"worktrees/wt/modules/sub/config":      dropped,
		"sequencer/todo":                       todo,
		"BISECT_LOG":                           plain,
		"MERGE_RR":                             dropped,
		"description":                          plain,
		"branches/origin":                      dropped,
		"svn/whatever":                         dropped,
		"modules/sub/commondir":                dropped,
		"modules/sub/info/exclude":             plain,
		"worktrees/wt/rebase-merge/done":       plain,
		"worktrees/wt/logs/HEAD":               plain,
		"worktrees/wt/refs/bisect/bad":         plain,
		"worktrees/wt/objects/info/alternates": dropped,
	} {
		assert.Equal(t, want, classify(rel), rel)
	}
}

func TestDirAllowed(t *testing.T) {
	for rel, want := range map[string]bool{
		"objects": true, "refs/heads": true, "hooks": false, "worktrees": true, "worktrees/wt": true,
		"worktrees/wt/logs": true, "modules": true, "modules/sub": true, "modules/sub/hooks": false,
		"modules/sub/refs": true, "info": true, "info/x": false, "worktrees/wt/modules": false,
	} {
		assert.Equal(t, want, dirAllowed(rel), rel)
	}
}

func TestHasExec(t *testing.T) {
	assert.True(t, hasExec([]byte("pick 1 a\nexec make\n")))
	assert.True(t, hasExec([]byte("  x rm -rf ~\n")))
	assert.False(t, hasExec([]byte("pick 1 exec\n# exec\n")))
}

func TestBadStateFile(t *testing.T) {
	for _, tt := range []struct {
		dir, name, content string
		bad                bool
	}{
		{"rebase-merge", "strategy", "ort\n", false},
		{"rebase-merge", "strategy", "octopus\n", false},
		{"rebase-merge", "strategy", "../../x\n", true},
		{"rebase-merge", "strategy", "ort \n", true},
		{"rebase-apply", "strategy", "evil\n", true},
		{"rebase-merge", "git-rebase-todo", "pick 1 a\nexec make\n", true},
		{"rebase-merge", "gpg_sign_opt", "-SABCD\n", false},
		{"rebase-merge", "gpg_sign_opt", "--exec=x\n", true},
		{"sequencer", "todo", "pick 1 a\n", false},
		{"sequencer", "opts", "[options]\n\tstrategy = ort\n\tgpg-sign = K\n", false},
		{"sequencer", "opts", "[options]\n\tstrategy = ../../x\n", true},
		{"sequencer", "opts", "[options\n", true},
		{"sequencer", "opts", "[options]\n\tstrategy = resolve\n\tstrategy-option = patience\n\tstrategy-option = rename-threshold=50\n", false},
		{"sequencer", "opts", "[options]\n\tstrategy = resolve\n\tstrategy-option = index-output=/x\n", true},
		{"rebase-merge", "strategy_opts", "'--patience' '--find-renames=40'\n", false},
		{"rebase-merge", "strategy_opts", "'--index-output=/home/u/.bashrc'\n", true},
		{"rebase-apply", "strategy_opts", "'patience'\n", true},
		{"rebase-apply", "apply-opt", "'--whitespace=fix' '-C1' '--directory=sub' '--reject'\n", false},
		{"rebase-apply", "apply-opt", "", false},
		{"rebase-apply", "apply-opt", "'--build-fake-ancestor=/home/u/.bashrc'\n", true},
		{"rebase-apply", "apply-opt", "'-C1' '--unsafe-paths'\n", true},
		{"rebase-apply", "apply-opt", "'--exclude=--x'\n", true},
		{"rebase-apply", "apply-opt", "--whitespace=fix\n", true},
	} {
		assert.Equal(t, tt.bad, badStateFile(tt.dir, tt.name, []byte(tt.content)) != "", "%s/%s: %q", tt.dir, tt.name, tt.content)
	}
}

func TestSqDequote(t *testing.T) {
	args, err := sqDequote(`'a' 'b c' 'it'\''s' 'wow'\!''`)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b c", "it's", "wow!"}, args)
	for _, bad := range []string{`a`, `'a`, `'a'b`} {
		_, err := sqDequote(bad)
		assert.Error(t, err, bad)
	}
}
