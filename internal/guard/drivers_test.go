package guard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigRuns(t *testing.T) {
	cfg := "[filter \"nbstripout\"]\n\tclean = \"/usr/bin/python3\" -m nbstripout\n" +
		"[filter \"x\"]\n\tsmudge = sh scripts/smudge.sh %f\n" +
		"[diff \"pdf\"]\n\ttextconv = tools/pdf2txt --quiet\n" +
		"[core]\n\tfsmonitor = ./.git-fsmonitor\n\teditor = code --wait\n\tpager = less -R\n" +
		"[credential]\n\thelper = store\n" +
		"[alias]\n\tup = !git fetch && ./bin/sync $1\n\tst = status\n" +
		"[include]\n\tpath = ../.gitconfig.repo\n" +
		"[includeIf \"onbranch:main\"]\n\tpath = /abs/inc\n" +
		"[include]\n\tpath = ~/.gitconfig.mine\n"
	entries, err := ParseConfig([]byte(cfg))
	require.NoError(t, err)
	got := ConfigRuns(entries)
	assert.ElementsMatch(t, []string{
		"/usr/bin/python3",            // outside the roots: left by the caller
		"nbstripout", "nbstripout.py", // python -m looks in the working directory first
		"scripts/smudge.sh",
		"tools/pdf2txt",
		".git-fsmonitor", // a program given as a path
		"bin/sync",
		"fetch", // an argument: git's, here, but it could be a file a program reads
		GitDirToken + "/../.gitconfig.repo", "/abs/inc",
	}, got)
	// Programs found on PATH, options and placeholders protect nothing:
	// a worktree's code/, store/ or less/ stays writable.
	for _, n := range []string{"code", "less", "store", "status", "%f", "--wait"} {
		assert.NotContains(t, got, n)
	}
}
