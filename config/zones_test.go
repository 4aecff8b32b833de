package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/zones"
)

const zonesDoc = `
[zones.data]
path = "data"
mode = "rw"
approval = { write = "ask", delete = "blocked" }

[zones.input]
path = "/srv/input"

[[agents]]
id = "parent"
[agents.sandbox]
zones = [{ name = "data", mode = "rw" }, { name = "input", mode = "ro" }]

[[agents]]
id = "pure"

[[agents]]
id = "strict"
[agents.sandbox]
zones = [{ name = "data", mode = "rw", approval = { write = "blocked" } }]
`

func TestZones(t *testing.T) {
	cfg, err := parseDoc(t, zonesDoc)
	require.NoError(t, err)
	assert.Equal(t, []zones.Zone{
		{Name: "data", Path: "/etc/corral/data", Mode: zones.ReadWrite, Approval: zones.Approval{Write: zones.Ask, Delete: zones.Blocked}},
		{Name: "input", Path: "/srv/input", Mode: zones.ReadOnly},
	}, cfg.Zones)
	p, _ := cfg.Agent("parent")
	assert.Equal(t, []zones.Decl{{Name: "data", Mode: zones.ReadWrite}, {Name: "input", Mode: zones.ReadOnly}}, p.Sandbox.Zones)

	a, err := cfg.Access("parent")
	require.NoError(t, err)
	assert.Equal(t, map[string]zones.Mode{"data": zones.ReadWrite, "input": zones.ReadOnly}, a.Modes())
	a, err = cfg.Access("pure")
	require.NoError(t, err)
	assert.True(t, a.Pure(), "no declaration, no access")
	a, err = cfg.Access("strict")
	require.NoError(t, err)
	z, _ := a.Zone("data")
	assert.Equal(t, zones.Approval{Write: zones.Blocked, Delete: zones.Blocked}, z.Approval)
	_, err = cfg.Access("nobody")
	require.Error(t, err)
}

func TestZonesDefault(t *testing.T) {
	cfg, err := parseDoc(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nzones = [{ name = \"workspace\", mode = \"rw\" }]\n")
	require.NoError(t, err)
	assert.Equal(t, zones.Defaults("/etc/corral"), cfg.Zones)
	a, err := cfg.Access("a")
	require.NoError(t, err)
	assert.Equal(t, []string{"workspace"}, a.Names())
}

func TestZonesErrors(t *testing.T) {
	const agent = "[[agents]]\nid = \"a\"\n[agents.sandbox]\n"
	const data = "[zones.data]\npath = \"/d\"\nmode = \"ro\"\n"
	tests := []struct {
		name, doc, want string
		line            int
	}{
		{"zone without path", "[zones.data]\nmode = \"rw\"\n" + agent, `1: zones.data.path: required`, 1},
		{"zone bad mode", "[zones.data]\npath = \"/d\"\nmode = \"write\"\n" + agent, `3: zones.data.mode: "write" is not a mode; want "ro" or "rw"`, 3},
		{"zone bad approval", data + "approval = { delete = \"never\" }\n" + agent, `4: zones.data.approval.delete: "never" is not an approval; want "preApproved", "ask" or "blocked"`, 4},
		{"zone unknown key", data + "size = 3\n" + agent, `4: zones.data.size: unknown key; want one of approval, mode, path`, 4},
		{"zone bad name", "[zones.etc]\npath = \"/d\"\n" + agent, `1: zones.etc: "etc" is a system directory at the top of the sandbox; choose another name`, 1},
		{"zone path type", "[zones.data]\npath = 3\n" + agent, `2: zones.data.path: want a string, not an integer`, 2},
		{"zones not a table", "zones = 3\n" + agent, `1: zones: want a table, not an integer`, 1},
		{"rw above ro", data + agent + "zones = [{ name = \"data\", mode = \"rw\" }]\n", `7: agents[0].sandbox.zones[0]: agent requests "rw" on data but project has "ro"`, 7},
		{"unknown zone", data + agent + "zones = [{ name = \"cache\" }]\n", `7: agents[0].sandbox.zones[0]: agent requests cache, which project does not have`, 7},
		{"decl without name", data + agent + "zones = [{ mode = \"ro\" }]\n", `7: agents[0].sandbox.zones[0].name: required`, 7},
		{"decl unknown key", data + agent + "zones = [{ name = \"data\", path = \"/x\" }]\n", `7: agents[0].sandbox.zones[0].path: unknown key; want one of approval, mode, name`, 7},
		{"decl not an array", data + agent + "zones = \"data\"\n", `7: agents[0].sandbox.zones: want an array of tables, not a string`, 7},
		{"decl twice", data + agent + "zones = [{ name = \"data\" }, { name = \"data\" }]\n", `7: agents[0].sandbox.zones[1]: agent declares data twice`, 7},
		{"looser approval", "[zones.data]\npath = \"/d\"\nmode = \"rw\"\napproval = { write = \"ask\" }\n" + agent +
			"zones = [{ name = \"data\", mode = \"rw\", approval = { write = \"preApproved\" } }]\n",
			`8: agents[0].sandbox.zones[0]: agent requests write "preApproved" on data but project has "ask"`, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseDoc(t, tt.doc)
			require.Error(t, err)
			assert.Equal(t, testFile+":"+tt.want, err.Error())
			var ce *Error
			require.True(t, errors.As(err, &ce))
			assert.Equal(t, tt.line, ce.Line)
		})
	}
}

// [defaults.sandbox] may declare zones; an agent's own list replaces it
// whole, and an empty one means none.
func TestZonesDefaults(t *testing.T) {
	cfg, err := parseDoc(t, `
[zones.data]
path = "/d"
mode = "rw"
[defaults.sandbox]
zones = [{ name = "data", mode = "ro" }]
[[agents]]
id = "inherits"
[[agents]]
id = "own"
sandbox.zones = [{ name = "data", mode = "rw" }]
[[agents]]
id = "none"
sandbox.zones = []
`)
	require.NoError(t, err)
	for id, want := range map[string]map[string]zones.Mode{
		"inherits": {"data": zones.ReadOnly},
		"own":      {"data": zones.ReadWrite},
		"none":     nil,
	} {
		a, err := cfg.Access(id)
		require.NoError(t, err)
		assert.Equal(t, want, a.Modes(), id)
	}
	_, err = parseDoc(t, "[zones.data]\npath = \"/d\"\n[defaults.sandbox]\nzones = [{ name = \"data\", mode = \"rw\" }]\n[[agents]]\nid = \"a\"\n")
	require.EqualError(t, err, testFile+`:4: defaults.sandbox.zones[0]: agent requests "rw" on data but project has "ro"`)
}
