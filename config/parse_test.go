package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// testFile is where test documents claim to live: relative paths in them
// resolve against /etc/corral.
const testFile = "/etc/corral/agents.toml"

func parseDoc(t *testing.T, doc string) (*Config, error) {
	t.Helper()
	return Parse(strings.NewReader(doc), testFile)
}

// runtimeDefaults fills in the defaults of the persistent sandboxes' keys,
// which the tables below leave out.
func runtimeDefaults(s Sandbox) Sandbox {
	d := defaultSandbox()
	if s.Sessions == "" {
		s.Sessions = SessionsAll
		if s.Mode == corral.ModeDisabled {
			s.Sessions = SessionsOff
		}
	}
	if s.Scope == "" {
		s.Scope = d.Scope
	}
	if s.WorkspaceAccess == "" {
		s.WorkspaceAccess = d.WorkspaceAccess
	}
	if s.PruneIdle == 0 && s.PruneMaxAge == 0 {
		s.PruneIdle, s.PruneMaxAge, s.PersistHome = d.PruneIdle, d.PruneMaxAge, true
	}
	return s
}

func TestParseDefaults(t *testing.T) {
	want := runtimeDefaults(Sandbox{Mode: corral.ModeEnabled, Network: corral.NetworkHost, Fallback: FallbackFail})
	tests := []struct {
		name string
		doc  string
	}{
		{"no sandbox table", "[[agents]]\nid = \"a\"\n"},
		{"empty sandbox table", "[[agents]]\nid = \"a\"\n[agents.sandbox]\n"},
		{"inline empty sandbox", "agents = [{id = \"a\", sandbox = {}}]\n"},
		{"empty lists", "[[agents]]\nid = \"a\"\n[agents.sandbox]\nwritable_paths = []\nenv = []\n"},
		{"byte order mark", "\ufeff[[agents]]\nid = \"a\"\n"},
		{"crlf", "[[agents]]\r\nid = \"a\"\r\n[agents.sandbox]\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseDoc(t, tt.doc)
			require.NoError(t, err)
			require.Len(t, cfg.Agents, 1)
			assert.Equal(t, "a", cfg.Agents[0].ID)
			got := cfg.Agents[0].Sandbox
			assert.Equal(t, want.Mode, got.Mode)
			assert.Equal(t, want.Network, got.Network)
			assert.Equal(t, want.Fallback, got.Fallback)
			assert.Empty(t, got.Workspace)
			assert.Empty(t, got.WritablePaths)
			assert.Empty(t, got.ReadOnlyPaths)
			assert.Empty(t, got.HiddenPaths)
			assert.Empty(t, got.Env)
			assert.Empty(t, got.AllowPlanting)
			assert.False(t, got.AllowUnixSockets)
			assert.False(t, got.AllowPtrace)
			assert.Empty(t, got.Changeset)
			assert.Equal(t, testFile, cfg.File)
		})
	}
}

func TestParseValues(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want Sandbox
	}{
		{
			name: "every key",
			doc: `[[agents]]
id = "coder"
[agents.sandbox]
mode = "disabled"
workspace = "/srv/coder"
writable_paths = ["/srv/cache", "/var/tmp/x"]
read_only_paths = ["/srv/coder/.data"]
hidden_paths = ["/root/.ssh"]
network = "none"
fallback = "warn"
env = ["GOPATH", "CI=1", "EMPTY="]
allow_planting = [".git", ".envrc"]
protect = ["tools/hooks", "nbstripout.py"]
allow_unix_sockets = true
allow_ptrace = true
changeset = "/var/tmp/coder-changes"
changeset_paths = ["/var/tmp/x"]
`,
			want: Sandbox{
				Mode:          corral.ModeDisabled,
				Workspace:     "/srv/coder",
				WritablePaths: []string{"/srv/cache", "/var/tmp/x"},
				ReadOnlyPaths: []string{"/srv/coder/.data"},
				HiddenPaths:   []string{"/root/.ssh"},
				Network:       corral.NetworkNone,
				Fallback:      FallbackWarn,
				Env:           []string{"GOPATH", "CI=1", "EMPTY="},
				AllowPlanting: []string{".git", ".envrc"},
				Protect:       []string{"tools/hooks", "nbstripout.py"},

				AllowUnixSockets: true,
				AllowPtrace:      true,
				Changeset:        "/var/tmp/coder-changes",
				ChangesetPaths:   []string{"/var/tmp/x"},
			},
		},
		{
			name: "switches off",
			doc:  "[[agents]]\nid = \"coder\"\n[agents.sandbox]\nallow_unix_sockets = false\nallow_ptrace = false\n",
			want: Sandbox{Mode: corral.ModeEnabled, Network: corral.NetworkHost, Fallback: FallbackFail},
		},
		{
			name: "explicit defaults",
			doc:  "[[agents]]\nid = \"coder\"\n[agents.sandbox]\nmode = \"enabled\"\nnetwork = \"host\"\nfallback = \"fail\"\n",
			want: Sandbox{Mode: corral.ModeEnabled, Network: corral.NetworkHost, Fallback: FallbackFail},
		},
		{
			name: "dotted keys",
			doc:  "[[agents]]\nid = \"coder\"\nsandbox.network = \"none\"\nsandbox.workspace = \"/w\"\n",
			want: Sandbox{Mode: corral.ModeEnabled, Workspace: "/w", Network: corral.NetworkNone, Fallback: FallbackFail},
		},
		{
			name: "inline tables",
			doc:  "agents = [{id = \"coder\", sandbox = {mode = \"disabled\", hidden_paths = [\"/h\"]}}]\n",
			want: Sandbox{Mode: corral.ModeDisabled, HiddenPaths: []string{"/h"}, Network: corral.NetworkHost, Fallback: FallbackFail},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseDoc(t, tt.doc)
			require.NoError(t, err)
			a, ok := cfg.Agent("coder")
			require.True(t, ok)
			assert.Equal(t, runtimeDefaults(tt.want), a.Sandbox)
		})
	}
}

func TestParseRelativePaths(t *testing.T) {
	tests := []struct {
		path string
		want string
	}{
		{"work", "/etc/corral/work"},
		{"./work/", "/etc/corral/work"},
		{"../shared", "/etc/shared"},
		{"a/../b", "/etc/corral/b"},
		{".", "/etc/corral"},
		{"/abs//path/", "/abs/path"},
		{"/abs/../other", "/other"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			doc := "[[agents]]\nid = \"a\"\n[agents.sandbox]\n" +
				"workspace = " + quote(tt.path) + "\n" +
				"writable_paths = [" + quote(tt.path) + "]\n" +
				"read_only_paths = [" + quote(tt.path) + "]\n" +
				"hidden_paths = [" + quote(tt.path) + "]\n" +
				"changeset = " + quote(tt.path) + "\n"
			cfg, err := parseDoc(t, doc)
			require.NoError(t, err)
			s := cfg.Agents[0].Sandbox
			assert.Equal(t, tt.want, s.Workspace)
			assert.Equal(t, []string{tt.want}, s.WritablePaths)
			assert.Equal(t, []string{tt.want}, s.ReadOnlyPaths)
			assert.Equal(t, []string{tt.want}, s.HiddenPaths)
			assert.Equal(t, tt.want, s.Changeset)
		})
	}
}

func TestParseRelativeToFileNotCwd(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(t.TempDir())
	cfg, err := Parse(strings.NewReader("[[agents]]\nid = \"a\"\nsandbox.workspace = \"ws\"\n"), dir+"/sub/agents.toml")
	require.NoError(t, err)
	assert.Equal(t, dir+"/sub/ws", cfg.Agents[0].Sandbox.Workspace)
}

func quote(s string) string { return `"` + s + `"` }

func TestParseErrors(t *testing.T) {
	const head = "[[agents]]\nid = \"a\"\n[agents.sandbox]\n" // keys below start on line 4
	tests := []struct {
		name string
		doc  string
		want string // the error text after "<file>:"
		line int
	}{
		// Bad values.
		{"mode", head + "mode = \"on\"\n", `4: agents[0].sandbox.mode: "on" is not a mode; want "off", "non-main", "all", "enabled" or "disabled"`, 4},
		{"mode case", head + "mode = \"Enabled\"\n", `4: agents[0].sandbox.mode: "Enabled" is not a mode; want "off", "non-main", "all", "enabled" or "disabled"`, 4},
		{"network", head + "network = \"bridge\"\n", `4: agents[0].sandbox.network: "bridge" is not a network; want "host", "none" or "allow"`, 4},
		{"fallback", head + "fallback = \"ignore\"\n", `4: agents[0].sandbox.fallback: "ignore" is not a fallback; want "fail" or "warn"`, 4},
		{"second agent", head + "[[agents]]\nid = \"b\"\n\n[agents.sandbox]\nnetwork = \"off\"\n",
			`8: agents[1].sandbox.network: "off" is not a network; want "host", "none" or "allow"`, 8},
		{"empty workspace", head + "workspace = \"\"\n", `4: agents[0].sandbox.workspace: empty path`, 4},
		{"tilde workspace", head + "workspace = \"~/work\"\n", `4: agents[0].sandbox.workspace: "~/work": ~ is not expanded; write the full path`, 4},
		{"empty writable", head + "writable_paths = [\"/a\", \"\"]\n", `4: agents[0].sandbox.writable_paths[1]: empty path`, 4},
		{"element on own line", head + "read_only_paths = [\n  \"/a\",\n  \"~x\",\n]\n",
			`6: agents[0].sandbox.read_only_paths[1]: "~x": ~ is not expanded; write the full path`, 6},
		{"nul in hidden", head + "hidden_paths = [\"/a\\u0000b\"]\n", `4: agents[0].sandbox.hidden_paths[0]: "/a\x00b" contains a NUL byte`, 4},
		{"env empty name", head + "env = [\"=secret\"]\n", `4: agents[0].sandbox.env[0]: want KEY or KEY=VALUE, with a KEY that is not empty and has no spaces`, 4},
		{"env empty", head + "env = [\"A\", \"\"]\n", `4: agents[0].sandbox.env[1]: want KEY or KEY=VALUE, with a KEY that is not empty and has no spaces`, 4},
		{"env space", head + "env = [\"API_KEY sk-123\"]\n", `4: agents[0].sandbox.env[0]: want KEY or KEY=VALUE, with a KEY that is not empty and has no spaces`, 4},
		{"env nul", head + "env = [\"A=b\\u0000c\"]\n", `4: agents[0].sandbox.env[0]: want KEY or KEY=VALUE, with a KEY that is not empty and has no spaces`, 4},
		{"empty changeset", head + "changeset = \"\"\n", `4: agents[0].sandbox.changeset: empty path`, 4},
		{"tilde changeset", head + "changeset = \"~/cs\"\n", `4: agents[0].sandbox.changeset: "~/cs": ~ is not expanded; write the full path`, 4},
		{"allow_planting", head + "allow_planting = [\".git/hook\"]\n",
			`4: agents[0].sandbox.allow_planting[0]: ".git/hook" is not a protected name; want one of ` + strings.Join(corral.ProtectedNames(), ", "), 4},

		{"protect absolute", head + "protect = [\"/etc/x\"]\n",
			`4: agents[0].sandbox.protect[0]: "/etc/x": want a name relative to each writable root, not an absolute path`, 4},
		{"protect dotdot", head + "protect = [\"a\", \"../b\"]\n", `4: agents[0].sandbox.protect[1]: "../b": must not hold ".."`, 4},
		{"protect unclean", head + "protect = [\"a/\"]\n", `4: agents[0].sandbox.protect[0]: "a/": not clean (want a)`, 4},
		{"protect not strings", head + "protect = \"a\"\n", `4: agents[0].sandbox.protect: want an array of strings, not a string`, 4},

		// Ids.
		{"missing id", "[[agents]]\n[agents.sandbox]\nmode = \"enabled\"\n", `1: agents[0].id: required`, 1},
		{"missing id second", head + "\n[[agents]]\nsandbox.network = \"none\"\n", `5: agents[1].id: required`, 5},
		{"empty id", "[[agents]]\nid = \"\"\n", `2: agents[0].id: "" is not a valid id; use letters, digits, '.', '_' or '-'`, 2},
		{"id with space", "[[agents]]\nid = \"my agent\"\n", `2: agents[0].id: "my agent" is not a valid id; use letters, digits, '.', '_' or '-'`, 2},
		{"id with slash", "[[agents]]\nid = \"../x\"\n", `2: agents[0].id: "../x" is not a valid id; use letters, digits, '.', '_' or '-'`, 2},
		{"id dotdot", "[[agents]]\nid = \"..\"\n", `2: agents[0].id: ".." is not a valid id; use letters, digits, '.', '_' or '-'`, 2},
		{"id non-ascii", "[[agents]]\nid = \"agént\"\n", `2: agents[0].id: "agént" is not a valid id; use letters, digits, '.', '_' or '-'`, 2},
		{"duplicate id", "[[agents]]\nid = \"a\"\n[[agents]]\nid = \"b\"\n[[agents]]\nid = \"a\"\n",
			`6: agents[2].id: duplicate id "a", first used by agents[0] on line 2`, 6},
		{"no agents", "", `agents: no agents; add an [[agents]] table with an id`, 0},
		{"empty agents", "agents = []\n", `1: agents: no agents; add an [[agents]] table with an id`, 1},

		// Unknown keys.
		{"unknown top", "name = \"x\"\n[[agents]]\nid = \"a\"\n", `1: name: unknown key; want one of agents, defaults, zones`, 1},
		{"unknown agent key", "[[agents]]\nid = \"a\"\nmodel = \"m\"\n", `3: agents[0].model: unknown key; want one of id, main_session, sandbox, tools`, 3},
		{"unknown sandbox key", head + "[[agents]]\nid = \"b\"\n[agents.sandbox]\nwriteable_paths = []\n",
			`7: agents[1].sandbox.writeable_paths: unknown key; want one of allow_home, allow_planting, allow_ptrace, allow_unix_sockets, allowed_domains, allowed_ips, binds, bootstrap_files, changeset, changeset_paths, denied_domains, env, fallback, hidden_paths, host_ports, limits, media_dir, mode, network, persist_home, protect, proxy_connections, prune_idle, prune_max_age, publish, publish_any, read_only_paths, real_paths_fallback, reveal, scope, secrets, state_dir, workspace, workspace_access, writable_paths, zones`, 7},
		{"unknown inline key", "[[agents]]\nid = \"a\"\nsandbox = { mode = \"enabled\", net = \"none\" }\n",
			`3: agents[0].sandbox.net: unknown key; want one of allow_home, allow_planting, allow_ptrace, allow_unix_sockets, allowed_domains, allowed_ips, binds, bootstrap_files, changeset, changeset_paths, denied_domains, env, fallback, hidden_paths, host_ports, limits, media_dir, mode, network, persist_home, protect, proxy_connections, prune_idle, prune_max_age, publish, publish_any, read_only_paths, real_paths_fallback, reveal, scope, secrets, state_dir, workspace, workspace_access, writable_paths, zones`, 3},
		{"unknown table", "[[agents]]\nid = \"a\"\n[agents.model]\nname = \"m\"\n", `3: agents[0].model: unknown key; want one of id, main_session, sandbox, tools`, 3},
		{"unknown tools key", "[[agents]]\nid = \"a\"\n[agents.tools]\nshell = true\n", `4: agents[0].tools.shell: unknown key; want one of allow, deny`, 4},
		{"unknown defaults key", "[defaults.model]\nname = \"m\"\n[[agents]]\nid = \"a\"\n", `1: defaults.model: unknown key; want one of sandbox, tools`, 1},
		{"tool pattern", "[[agents]]\nid = \"a\"\n[agents.tools]\ndeny = [\"shell\", \"write file\"]\n", `4: agents[0].tools.deny[1]: "write file" is not a tool name; use letters, digits, '_', '-', '.' and the wildcard '*'`, 4},
		{"tool pattern empty", "[defaults.tools]\nallow = [\"\"]\n[[agents]]\nid = \"a\"\n", `2: defaults.tools.allow[0]: "" is not a tool name; use letters, digits, '_', '-', '.' and the wildcard '*'`, 2},
		{"tools list string", "[[agents]]\nid = \"a\"\n[agents.tools]\nallow = \"shell\"\n", `4: agents[0].tools.allow: want an array of strings, not a string`, 4},

		// Types.
		{"mode integer", head + "mode = 1\n", `4: agents[0].sandbox.mode: want a string, not an integer`, 4},
		{"id integer", "[[agents]]\nid = 7\n", `2: agents[0].id: want a string, not an integer`, 2},
		{"paths string", head + "writable_paths = \"/a\"\n", `4: agents[0].sandbox.writable_paths: want an array of strings, not a string`, 4},
		{"paths element", head + "hidden_paths = [\"/a\", 2]\n", `4: agents[0].sandbox.hidden_paths[1]: want a string, not an integer`, 4},
		{"unix sockets string", head + "allow_unix_sockets = \"yes\"\n", `4: agents[0].sandbox.allow_unix_sockets: want a boolean, not a string`, 4},
		{"ptrace integer", head + "allow_ptrace = 1\n", `4: agents[0].sandbox.allow_ptrace: want a boolean, not an integer`, 4},
		{"changeset array", head + "changeset = [\"/cs\"]\n", `4: agents[0].sandbox.changeset: want a string, not an array`, 4},
		{"changeset_paths string", head + "changeset_paths = \"/w\"\n", `4: agents[0].sandbox.changeset_paths: want an array of strings, not a string`, 4},
		{"tilde changeset path", head + "changeset_paths = [\"~/w\"]\n", `4: agents[0].sandbox.changeset_paths[0]: "~/w": ~ is not expanded; write the full path`, 4},
		{"env boolean", head + "env = true\n", `4: agents[0].sandbox.env: want an array of strings, not a boolean`, 4},
		{"sandbox string", "[[agents]]\nid = \"a\"\nsandbox = \"on\"\n", `3: agents[0].sandbox: want a table, not a string`, 3},
		{"agents integer", "agents = 5\n", `1: agents: want an array of tables, not an integer`, 1},
		{"agents element", "agents = [1]\n", `1: agents[0]: want a table, not an integer`, 1},

		{"agents table", "[agents]\nid = \"a\"\n", `1: agents: want an array of tables, not a table`, 1},
		{"sandbox before agents", "[agents.sandbox]\nmode = \"enabled\"\n", `1: agents: want an array of tables, not a table`, 1},
		{"sandbox array of tables", "[[agents]]\nid = \"a\"\n[[agents.sandbox]]\n", `3: agents[0].sandbox: want a table, not an array of tables`, 3},
		{"sandbox array", "[[agents]]\nid = \"a\"\nsandbox = []\n", `3: agents[0].sandbox: want a table, not an array`, 3},
		{"mode array", head + "mode = [\"enabled\"]\n", `4: agents[0].sandbox.mode: want a string, not an array`, 4},
		{"mode date", head + "mode = 2024-01-01\n", `4: agents[0].sandbox.mode: want a string, not a date or time`, 4},
		{"nested array", head + "env = [[\"A\"]]\n", `4: agents[0].sandbox.env[0]: want a string, not an array`, 4},
		{"deeply nested", head + "env = " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n", `4: agents[0].sandbox.env[0]: want a string, not an array`, 4},
		{"unknown in inline agent", "agents = [{id = \"a\"}, {id = \"b\", bogus = 1}]\n", `1: agents[1].bogus: unknown key; want one of id, main_session, sandbox, tools`, 1},
		{"unknown subtable", head + "[agents.sandbox.extra]\n", `4: agents[0].sandbox.extra: unknown key; want one of allow_home, allow_planting, allow_ptrace, allow_unix_sockets, allowed_domains, allowed_ips, binds, bootstrap_files, changeset, changeset_paths, denied_domains, env, fallback, hidden_paths, host_ports, limits, media_dir, mode, network, persist_home, protect, proxy_connections, prune_idle, prune_max_age, publish, publish_any, read_only_paths, real_paths_fallback, reveal, scope, secrets, state_dir, workspace, workspace_access, writable_paths, zones`, 4},

		// Syntax and TOML rules.
		{"repeated table", head + "[agents.sandbox]\n", `4: agents[0].sandbox: table sandbox already exists`, 4},
		{"crlf", "[[agents]]\r\nid = \"a\"\r\n[agents.sandbox]\r\nnetwork = \"x\"\r\n", `4: agents[0].sandbox.network: "x" is not a network; want "host", "none" or "allow"`, 4},
		{"unterminated string", "[[agents]]\nid = \"a\n", `2: basic strings cannot have new lines`, 2},
		{"repeated key", "[[agents]]\nid = \"a\"\nid = \"b\"\n", `3: agents[0].id: key id is already defined`, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseDoc(t, tt.doc)
			require.Error(t, err)
			want := testFile + ":" + tt.want
			if tt.line == 0 {
				want = testFile + ": " + tt.want
			}
			assert.Equal(t, want, err.Error())
			var ce *Error
			require.True(t, errors.As(err, &ce), "error is %T", err)
			assert.Equal(t, tt.line, ce.Line)
			assert.Equal(t, testFile, ce.File)
			assert.NotContains(t, err.Error(), "\n", "errors are one line")
		})
	}
}

// TestErrorNeverEchoesEnv keeps a malformed env entry, which may hold a
// secret, out of error messages.
func TestErrorNeverEchoesEnv(t *testing.T) {
	_, err := parseDoc(t, "[[agents]]\nid = \"a\"\nsandbox.env = [\"TOKEN sk-ant-api03-SECRETVALUE\"]\n")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "SECRETVALUE")
}

// TestSchemaCoversDocument keeps the schema used for messages in step with
// the decoded structs.
func TestSchemaCoversDocument(t *testing.T) {
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for f := range typ.Fields() {
			key := join(prefix, f.Tag.Get("toml"))
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
				assert.Equal(t, "an array of tables", schema[key], key)
				walk(key+"[]", ft.Elem())
				continue
			}
			assert.Contains(t, schema, key)
			if ft.Kind() == reflect.Struct {
				walk(key, ft)
			}
		}
	}
	walk("", reflect.TypeFor[fileDoc]())
}

func TestConfigLookup(t *testing.T) {
	cfg, err := parseDoc(t, "[[agents]]\nid = \"b\"\n[[agents]]\nid = \"a\"\nsandbox.network = \"none\"\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a"}, cfg.IDs())
	a, ok := cfg.Agent("a")
	require.True(t, ok)
	assert.Equal(t, corral.NetworkNone, a.Sandbox.Network)
	_, ok = cfg.Agent("c")
	assert.False(t, ok)
}

func TestCorralConfig(t *testing.T) {
	cfg, err := parseDoc(t, `[[agents]]
id = "a"
[agents.sandbox]
mode = "disabled"
workspace = "ws"
writable_paths = ["/w"]
read_only_paths = ["/r"]
hidden_paths = ["/h"]
network = "none"
env = ["A=1"]
allow_planting = [".git"]
protect = ["x.code-workspace"]
allow_unix_sockets = true
allow_ptrace = true
changeset = "changes"
changeset_paths = ["/w"]
`)
	require.NoError(t, err)
	s := cfg.Agents[0].Sandbox
	got := s.CorralConfig()
	assert.Equal(t, corral.Config{
		Mode:          corral.ModeDisabled,
		Fallback:      corral.FallbackFail,
		Workspace:     "/etc/corral/ws",
		WritablePaths: []string{"/w"},
		ReadOnlyPaths: []string{"/r"},
		HiddenPaths:   []string{"/h"},
		Network:       corral.NetworkNone,
		Env:           []string{"A=1"},
		AllowPlanting: []string{".git"},
		Protect:       []string{"x.code-workspace"},

		AllowUnixSockets: true,
		AllowPtrace:      true,
		Changeset:        "/etc/corral/changes",
		ChangesetPaths:   []string{"/w"},
	}, got)

	// The lists are the caller's to extend without touching the shared Config.
	got.WritablePaths[0] = "/changed"
	got.Env = append(got.Env, "B=2")
	assert.Equal(t, []string{"/w"}, s.WritablePaths)
	assert.Equal(t, []string{"A=1"}, s.Env)
}

func TestLoad(t *testing.T) {
	_, err := Load(t.TempDir() + "/missing.toml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "load config: open ")
	assert.Contains(t, err.Error(), "missing.toml: no such file or directory")
}

func TestParseRevealAndAllowHome(t *testing.T) {
	doc := "[[agents]]\nid = \"a\"\n[agents.sandbox]\nreveal = [\"keys\", \"/home/me/.aws\"]\nallow_home = true\n"
	cfg, err := Parse(strings.NewReader(doc), "/etc/corral/agents.toml")
	require.NoError(t, err)
	sb := cfg.Agents[0].Sandbox
	assert.Equal(t, []string{"/etc/corral/keys", "/home/me/.aws"}, sb.Reveal, "relative to the file")
	assert.True(t, sb.AllowHome)
	c := sb.CorralConfig()
	assert.Equal(t, sb.Reveal, c.Reveal)
	assert.True(t, c.AllowHome)

	_, err = Parse(strings.NewReader("[[agents]]\nid = \"a\"\n[agents.sandbox]\nreveal = [\"~/.aws\"]\n"), "x.toml")
	assert.EqualError(t, err, `x.toml:4: agents[0].sandbox.reveal[0]: "~/.aws": ~ is not expanded; write the full path`)
	_, err = Parse(strings.NewReader("[[agents]]\nid = \"a\"\n[agents.sandbox]\nallow_home = \"yes\"\n"), "x.toml")
	assert.ErrorContains(t, err, "want a boolean")
}

func TestParseNetworkAllow(t *testing.T) {
	cfg, err := parseDoc(t, `[[agents]]
id = "a"
[agents.sandbox]
network = "allow"
allowed_domains = ["example.com", "*.example.org:443"]
denied_domains = ["x.example.org"]
allowed_ips = ["10.0.0.0/8"]
`)
	require.NoError(t, err)
	s := cfg.Agents[0].Sandbox
	assert.Equal(t, corral.NetworkAllow, s.Network)
	assert.Equal(t, []string{"example.com", "*.example.org:443"}, s.AllowedDomains)
	assert.Equal(t, []string{"x.example.org"}, s.DeniedDomains)
	assert.Equal(t, []string{"10.0.0.0/8"}, s.AllowedIPs)
	assert.Zero(t, s.ProxyConnections, "the default")
	assert.Zero(t, s.CorralConfig().ProxyConnections)

	for doc, want := range map[string]int{
		"proxy_connections = 32":     32,
		`proxy_connections = "64"`:   64,
		`proxy_connections = "none"`: corral.NoLimit,
	} {
		cfg, err := parseDoc(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \"allow\"\n"+doc+"\n")
		require.NoError(t, err, doc)
		assert.Equal(t, want, cfg.Agents[0].Sandbox.ProxyConnections, doc)
		assert.Equal(t, want, cfg.Agents[0].Sandbox.CorralConfig().ProxyConnections, doc)
	}
	// The defaults' cap, unless the agent sets its own.
	cfg, err = parseDoc(t, `[defaults.sandbox]
network = "allow"
proxy_connections = 16
[[agents]]
id = "a"
[[agents]]
id = "b"
[agents.sandbox]
proxy_connections = 8
`)
	require.NoError(t, err)
	assert.Equal(t, 16, cfg.Agents[0].Sandbox.ProxyConnections)
	assert.Equal(t, 8, cfg.Agents[1].Sandbox.ProxyConnections)

	for _, c := range []struct{ doc, want string }{
		{"proxy_connections = 8", `agents[0].sandbox.proxy_connections: needs network = "allow"`},
		{"network = \"allow\"\nproxy_connections = 0", `agents[0].sandbox.proxy_connections: "0": want a number above zero, or none`},
		{"network = \"allow\"\nproxy_connections = -3", `agents[0].sandbox.proxy_connections: "-3": want a number above zero, or none`},
		{"network = \"allow\"\nproxy_connections = 2.5", `agents[0].sandbox.proxy_connections: want an integer or a string, not a float`},
		{"network = \"allow\"\nproxy_connections = \"lots\"", `agents[0].sandbox.proxy_connections: "lots": want a number above zero, or none`},
		{"network = \"host\"\nallowed_domains = [\"example.com\"]", `agents[0].sandbox.allowed_domains: needs network = "allow"`},
		{"denied_domains = [\"example.com\"]", `agents[0].sandbox.denied_domains: needs network = "allow"`},
		{"network = \"allow\"\nallowed_domains = [\"ok.example\", \"bad name\"]", `agents[0].sandbox.allowed_domains[1]: "bad name": `},
		{"network = \"allow\"\nallowed_ips = [\"10.0.0.0/33\"]", `agents[0].sandbox.allowed_ips[0]: "10.0.0.0/33": `},
		{"network = \"allow\"\nallowed_domains = \"example.com\"", `agents[0].sandbox.allowed_domains: want an array of strings`},
		{"network = \"open\"", `"open" is not a network; want "host", "none" or "allow"`},
	} {
		_, err := parseDoc(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\n"+c.doc+"\n")
		require.Error(t, err, c.doc)
		assert.Contains(t, err.Error(), c.want)
		assert.NotContains(t, err.Error(), "\n")
	}
}

func TestParseTools(t *testing.T) {
	cfg, err := parseDoc(t, `
[defaults.tools]
allow = ["*_file", "shell"]
deny = ["write_file"]

[[agents]]
id = "inherits"

[[agents]]
id = "denies"
[agents.tools]
deny = ["shell"]

[[agents]]
id = "clears"
[agents.tools]
deny = []
`)
	require.NoError(t, err)
	byID := map[string]Tools{}
	for _, a := range cfg.Agents {
		byID[a.ID] = a.Tools
	}
	assert.Equal(t, Tools{Allow: []string{"*_file", "shell"}, Deny: []string{"write_file"}}, byID["inherits"])
	assert.Equal(t, Tools{Allow: []string{"*_file", "shell"}, Deny: []string{"shell"}}, byID["denies"])
	assert.Equal(t, Tools{Allow: []string{"*_file", "shell"}, Deny: []string{}}, byID["clears"])

	cfg, err = parseDoc(t, "[[agents]]\nid = \"a\"\n")
	require.NoError(t, err)
	assert.Equal(t, Tools{}, cfg.Agents[0].Tools, "no policy: nil lists")
}

func TestParseRealPathsFallback(t *testing.T) {
	doc := "[defaults.sandbox]\nreal_paths_fallback = true\n[[agents]]\nid = \"a\"\n[[agents]]\nid = \"b\"\n[agents.sandbox]\nreal_paths_fallback = false\n"
	cfg, err := Parse(strings.NewReader(doc), "/etc/corral/agents.toml")
	require.NoError(t, err)
	assert.True(t, cfg.Agents[0].Sandbox.RealPathsFallback, "from the defaults")
	assert.True(t, cfg.Agents[0].Sandbox.CorralConfig().RealPathsFallback)
	assert.False(t, cfg.Agents[1].Sandbox.RealPathsFallback, "the agent's own wins")
	_, err = Parse(strings.NewReader("[[agents]]\nid = \"a\"\n[agents.sandbox]\nreal_paths_fallback = \"yes\"\n"), "x.toml")
	assert.ErrorContains(t, err, "want a boolean")
}
