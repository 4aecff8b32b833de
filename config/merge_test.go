package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

const twoLevels = `
[defaults.sandbox]
mode = "non-main"
scope = "agent"
workspace_access = "ro"
network = "none"
env = ["CI=1", "LANG"]
writable_paths = ["/srv/cache"]
prune_idle = "2h"

[[agents]]
id = "coder"
main_session = "desk"
[agents.sandbox]
scope = "session"
env = ["GOFLAGS=-mod=mod"]
writable_paths = ["/srv/coder"]
persist_home = false

[[agents]]
id = "plain"

[[agents]]
id = "legacy"
[agents.sandbox]
mode = "disabled"
`

func TestTwoLevelMerge(t *testing.T) {
	cfg, err := parseDoc(t, twoLevels)
	require.NoError(t, err)
	coder, _ := cfg.Agent("coder")
	assert.Equal(t, "desk", coder.MainSession)
	s := coder.Sandbox
	assert.Equal(t, SessionsNonMain, s.Sessions, "a key the agent leaves out comes from the defaults")
	assert.Equal(t, corral.ModeEnabled, s.Mode)
	assert.Equal(t, ScopeSession, s.Scope, "the agent's key wins")
	assert.Equal(t, AccessRO, s.WorkspaceAccess)
	assert.Equal(t, corral.NetworkNone, s.Network)
	assert.Equal(t, []string{"CI=1", "LANG", "GOFLAGS=-mod=mod"}, s.Env, "env merges: defaults then agent")
	assert.Equal(t, []string{"/srv/cache", "/srv/coder"}, s.WritablePaths, "path lists concatenate")
	assert.Equal(t, 2*time.Hour, s.PruneIdle)
	assert.Equal(t, 7*24*time.Hour, s.PruneMaxAge, "built-in default")
	assert.False(t, s.PersistHome)

	plain, _ := cfg.Agent("plain")
	assert.Equal(t, "main", plain.MainSession, "built-in main session key")
	assert.Equal(t, ScopeAgent, plain.Sandbox.Scope, "an agent without a sandbox table takes the defaults")
	assert.Equal(t, []string{"CI=1", "LANG"}, plain.Sandbox.Env)
	assert.True(t, plain.Sandbox.PersistHome)

	legacy, _ := cfg.Agent("legacy")
	assert.Equal(t, SessionsOff, legacy.Sandbox.Sessions, `"disabled" is an alias of "off"`)
	assert.Equal(t, corral.ModeDisabled, legacy.Sandbox.Mode)
}

func TestModeAliases(t *testing.T) {
	for mode, want := range map[string]Sessions{
		"off": SessionsOff, "disabled": SessionsOff, "all": SessionsAll, "enabled": SessionsAll, "non-main": SessionsNonMain,
	} {
		cfg, err := parseDoc(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nmode = \""+mode+"\"\n")
		require.NoError(t, err, mode)
		assert.Equal(t, want, cfg.Agents[0].Sandbox.Sessions, mode)
	}
}

func TestRuntimeKeyErrors(t *testing.T) {
	for _, tt := range []struct{ name, doc, want string }{
		{"scope", "[[agents]]\nid = \"a\"\n[agents.sandbox]\nscope = \"team\"\n", `4: agents[0].sandbox.scope: "team" is not a scope; want "session" or "agent" or "shared"`},
		{"access", "[[agents]]\nid = \"a\"\n[agents.sandbox]\nworkspace_access = \"rwx\"\n", `agents[0].sandbox.workspace_access: "rwx" is not a workspace access`},
		{"duration", "[[agents]]\nid = \"a\"\n[agents.sandbox]\nprune_idle = \"1 day\"\n", `agents[0].sandbox.prune_idle: "1 day" is not a duration`},
		{"error in defaults names the defaults", "[defaults.sandbox]\nscope = \"x\"\n[[agents]]\nid = \"a\"\n", `2: defaults.sandbox.scope: "x" is not a scope`},
		{"unknown key in defaults", "[defaults.sandbox]\nbogus = 1\n[[agents]]\nid = \"a\"\n", `2: defaults.sandbox.bogus: unknown key`},
		{"unknown defaults table", "[defaults.other]\n[[agents]]\nid = \"a\"\n", `defaults.other: unknown key`},
		{"empty main session", "[[agents]]\nid = \"a\"\nmain_session = \"\"\n", `agents[0].main_session: want a session key`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseDoc(t, tt.doc)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestBinds(t *testing.T) {
	doc := `
[defaults.sandbox]
binds = [{source = "/srv/shared", dest = "/shared", read_only = true}]

[[agents]]
id = "a"
[[agents.sandbox.binds]]
source = "data"
dest = "/data"
`
	cfg, err := parseDoc(t, doc)
	require.NoError(t, err)
	assert.Equal(t, []corral.Bind{
		{Source: "/srv/shared", Dest: "/shared", ReadOnly: true},
		{Source: "/etc/corral/data", Dest: "/data"},
	}, cfg.Agents[0].Sandbox.Binds, "binds concatenate, sources relative to the file")
	assert.Equal(t, cfg.Agents[0].Sandbox.Binds, cfg.Agents[0].Sandbox.CorralConfig().Binds)

	for _, tt := range []struct{ name, doc, want string }{
		{"relative dest", "[[agents]]\nid = \"a\"\n[agents.sandbox]\nbinds = [{source = \"/x\", dest = \"rel\"}]\n", `agents[0].sandbox.binds[0].dest: "rel": want an absolute, clean path`},
		{"no dest", "[[agents]]\nid = \"a\"\n[agents.sandbox]\nbinds = [{source = \"/x\"}]\n", `agents[0].sandbox.binds[0]: want source and dest`},
		{"unknown key", "[[agents]]\nid = \"a\"\n[agents.sandbox]\nbinds = [{source = \"/x\", dest = \"/y\", rw = true}]\n", `binds[0].rw: unknown key; want one of dest, read_only, source`},
		{"wrong kind", "[[agents]]\nid = \"a\"\n[agents.sandbox]\nbinds = [\"/x\"]\n", `binds[0]: want a table, not a string`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseDoc(t, tt.doc)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
