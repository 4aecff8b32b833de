package guard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseConfig(t *testing.T) {
	in := "# c\n[core]\n\trepositoryformatversion = 0\n\tbare\n[remote \"or\\\"ig\"]\n\turl = \"a b\" ; x\n\tfetch = +refs/*:refs/* # c\n[Branch \"Main\"]\n\tMerge = refs/heads/Main\n"
	got, err := ParseConfig([]byte(in))
	require.NoError(t, err)
	assert.Equal(t, []ConfigEntry{
		{Key: "core.repositoryformatversion", Value: "0"},
		{Key: "core.bare", Bool: true},
		{Key: `remote.or"ig.url`, Value: "a b"},
		{Key: `remote.or"ig.fetch`, Value: "+refs/*:refs/*"},
		{Key: "branch.Main.merge", Value: "refs/heads/Main"},
	}, got)
}

func TestParseConfigRefusesWhatGitMightReadOtherwise(t *testing.T) {
	for name, in := range map[string]string{
		"continuation":    "[core]\n\tpager = a\\\nb\n",
		"legacy header":   "[core.x]\n\ta = b\n",
		"key on header":   "[core] fsmonitor = x\n",
		"unknown escape":  "[core]\n\ta = \\q\n",
		"nul":             "[core]\n\ta = b\x00\n",
		"bom":             "\xef\xbb\xbf[core]\n",
		"open quote":      "[core]\n\ta = \"b\n",
		"outside section": "a = b\n",
		"bad key":         "[core]\n\t-a = b\n",
	} {
		_, err := ParseConfig([]byte(in))
		assert.Error(t, err, name)
	}
}

func TestAllowedConfig(t *testing.T) {
	for _, c := range []struct {
		key, value string
		ok         bool
	}{
		{"user.name", "x", true},
		{"remote.origin.url", "https://example.com/r", true},
		{"remote.origin.url", "ext::sh -c x", false},
		{"branch.main.remote", "ext::sh -c x", false},
		{"branch.main.pushremote", "FD::3", false},
		{"branch.main.remote", "origin", true},
		{"remote.origin.pushurl", "FD::3", false},
		{"remote.origin.url", "-oProxyCommand=x", false},
		{"remote.origin.uploadpack", "x", false},
		{"branch.main.merge", "refs/heads/main", true},
		{"submodule.s.update", "!sh", false},
		{"submodule.s.update", "rebase", true},
		{"core.fsmonitor", "x", false},
		{"core.hookspath", "x", false},
		{"core.sshcommand", "x", false},
		{"core.worktree", "x", false},
		{"alias.st", "status", false},
		{"include.path", "x", false},
		{"includeif.gitdir:/.path", "x", false},
		{"filter.x.clean", "x", false},
		{"diff.x.textconv", "x", false},
		{"credential.helper", "x", false},
		{"url.ext::x.insteadof", "y", false},
	} {
		ok, _ := AllowedConfig(c.key, c.value)
		assert.Equal(t, c.ok, ok, "%s = %s", c.key, c.value)
	}
}

func TestConfigChanges(t *testing.T) {
	old := []ConfigEntry{{Key: "a.b", Value: "1"}, {Key: "c.d", Value: "2"}}
	new := []ConfigEntry{{Key: "a.b", Value: "1"}, {Key: "e.f", Bool: true}}
	assert.Equal(t, []string{"c.d", "e.f"}, configChanges(old, new))
}
