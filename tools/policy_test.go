package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMatchName(t *testing.T) {
	for _, tc := range []struct {
		pat, name string
		want      bool
	}{
		{"shell", "shell", true},
		{"shell", "shells", false},
		{"*", "anything", true},
		{"*", "", true},
		{"*_file", "read_file", true},
		{"*_file", "list_files", false},
		{"read_*", "read_file", true},
		{"r*d*e", "read_file", true},
		{"r*d*x", "read_file", false},
		{"a*a", "a", false},
		{"a*a", "aa", true},
		{"*file*", "list_files", true},
	} {
		assert.Equal(t, tc.want, matchName(tc.pat, tc.name), "%q ~ %q", tc.pat, tc.name)
	}
}

func TestPolicyAllows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      Policy
		tool   string
		offers bool
	}{
		{"zero allows all", Policy{}, "shell", true},
		{"empty allow means all", Policy{Allow: []string{}}, "shell", true},
		{"allow list", Policy{Allow: []string{"read_file"}}, "shell", false},
		{"allow wildcard", Policy{Allow: []string{"*_file"}}, "write_file", true},
		{"deny", Policy{Deny: []string{"shell"}}, "shell", false},
		{"deny wins over allow", Policy{Allow: []string{"shell"}, Deny: []string{"sh*"}}, "shell", false},
		{"deny wins over allow all", Policy{Allow: []string{"*"}, Deny: []string{"exec"}}, "exec", false},
		{"deny leaves others", Policy{Deny: []string{"exec"}}, "shell", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.offers, tc.p.Allows(tc.tool))
		})
	}
}

func TestLayered(t *testing.T) {
	global := Policy{Allow: []string{"*_file", "shell"}, Deny: []string{"write_file"}}
	agent := Policy{Deny: []string{"shell"}}
	p := Layered(agent, global)
	assert.Equal(t, []string{"*_file", "shell"}, p.Allow, "allow comes from the global level")
	assert.Equal(t, []string{"shell"}, p.Deny, "the agent's deny replaces the global one")
	assert.Equal(t, []string{"read_file", "write_file"}, p.Filter([]string{"shell", "read_file", "write_file", "exec"}))

	// An explicit empty list at the agent level clears the global one.
	p = Layered(Policy{Deny: []string{}}, global)
	assert.True(t, p.Allows("write_file"))
	assert.Equal(t, DefaultPolicy(), Layered())
}

func TestPolicyValidate(t *testing.T) {
	require.NoError(t, Policy{Allow: []string{"*", "read_file", "mcp.x-1"}}.Validate())
	assert.ErrorContains(t, Policy{Deny: []string{""}}.Validate(), "tools.deny[0]: empty tool name")
	assert.ErrorContains(t, Policy{Allow: []string{"ok", "a b"}}.Validate(), `tools.allow[1]: "a b"`)
}
