package learn

import (
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMergeKeepsTheFileAndMarksAdditions(t *testing.T) {
	p := &Policy{Entries: []Entry{
		{Key: "writable_paths", Value: `"/home/u/.npm"`, Why: "first /home/u/.npm/x; 3 writes"},
		{Key: "writable_paths", Value: `"/home/u"`, Why: "first /home/u/.x", Weakens: "the home writable"},
		{Key: "allowed_domains", Value: `"registry.npmjs.org"`, Why: "first registry.npmjs.org:443"},
		{Key: "network", Value: `"allow"`, Why: "the destinations"},
		{Key: "limits.pids", Value: "1024", Why: "hit"},
	}}
	for name, doc := range map[string]string{
		"one-line list, no trailing comma": "# mine\n[[agents]]\nid = \"a\"\n[agents.sandbox]\nwritable_paths = [\"/w\"] # kept\nnetwork = \"none\"\n\n[[agents]]\nid = \"b\"\n",
		"multi-line list with a comment":   "[[agents]]\nid = \"a\"\n\n[agents.sandbox]\nwritable_paths = [\n  \"/w\", # one\n  \"/v\" # two\n]\n[agents.sandbox.limits]\nmemory = \"1G\"\n",
		"no sandbox table":                 "[defaults.sandbox]\nnetwork = \"none\"\n[[agents]]\nid = \"a\"\n[agents.tools]\nallow = [\"x\"]\n",
		"no such agent":                    "[[agents]]\nid = \"b\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			out, err := Merge([]byte(doc), "a", p)
			require.NoError(t, err)
			var v map[string]any
			require.NoError(t, toml.Unmarshal(out, &v), "%s", out)
			s := string(out)
			assert.Contains(t, s, `"/home/u/.npm", # learned: first /home/u/.npm/x; 3 writes`)
			assert.Contains(t, s, `# "/home/u", # learned, left out: the home writable`)
			agents := v["agents"].([]any)
			var a map[string]any
			for _, x := range agents {
				if x.(map[string]any)["id"] == "a" {
					a = x.(map[string]any)
				}
			}
			require.NotNil(t, a, "%s", s)
			sb := a["sandbox"].(map[string]any)
			assert.Contains(t, sb["writable_paths"], "/home/u/.npm")
			assert.NotContains(t, sb["writable_paths"], "/home/u")
			assert.Equal(t, "allow", sb["network"])
			assert.EqualValues(t, 1024, sb["limits"].(map[string]any)["pids"])
		})
	}
}

func TestBuildCollapsesHomeWrites(t *testing.T) {
	s := Seen{Home: "/home/u", Exists: func(string) bool { return true }, Network: "allow", Protected: []string{".bashrc"},
		CredentialStores: []string{"/home/u/.ssh"},
		HomeWrites: []string{"/home/u/.npm/_cacache/a", "/home/u/.npm/_cacache/b", "/home/u/.cache/pip/http/x",
			"/home/u/.local/share/app/db", "/home/u/.bashrc", "/home/u/.ssh/known_hosts"}}
	p := Build(s)
	var got []string
	for _, e := range p.Entries {
		if e.Key == "writable_paths" {
			got = append(got, e.Value+" "+e.Weakens)
		}
	}
	assert.Equal(t, []string{
		`"/home/u/.npm" `, `"/home/u/.ssh" holds the credential store /home/u/.ssh, hidden by default`,
		`"/home/u/.bashrc" a protected name: programs on the host run code from .bashrc`,
		`"/home/u/.cache/pip" `, `"/home/u/.local/share/app" `,
	}, got)
}

// A path the command named with a newline cannot add a key of its own.
func TestRenderedNamesStayInTheirStrings(t *testing.T) {
	p := Build(Seen{Home: "/h", Exists: func(string) bool { return true }, Network: "none",
		HomeWrites: []string{"/h/.x\"]\nallow_home = true\n#/f"}})
	out := Render("a", p, []string{"corral learn -- sh -c 'a\nallow_home = true'"})
	var v struct {
		Agents []struct {
			Sandbox map[string]any `toml:"sandbox"`
		} `toml:"agents"`
	}
	require.NoError(t, toml.Unmarshal(out, &v), "%s", out)
	require.Len(t, v.Agents, 1)
	assert.NotContains(t, v.Agents[0].Sandbox, "allow_home", "%s", out)
	assert.Equal(t, []any{"/h/.x\"]\nallow_home = true\n#"}, v.Agents[0].Sandbox["writable_paths"], "%s", out)
}

func TestBuildRaisesLimits(t *testing.T) {
	p := Build(Seen{Network: "allow", Events: []Event{
		{Kind: "limit", Target: "memory", Rule: "--memory 512MiB (came near it)"},
		{Kind: "limit", Target: "pids", Rule: "--pids 4096 (the default)"},
	}})
	require.Len(t, p.Entries, 2)
	assert.Equal(t, Entry{Key: "limits.memory", Value: `"1024MiB"`, Why: "came within a fifth of --memory 512MiB; twice that"}, p.Entries[0])
	assert.Equal(t, Entry{Key: "limits.pids", Value: "8192", Why: "hit --pids 4096 (the default); twice that"}, p.Entries[1])
}
