package zones

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The three examples of worker delegation from the zone design this
// package follows, verbatim. The test reads each one as it stands: who has
// what, what the child declares, and what it gets.
var seedExamples = []string{
	`Parent has: { data: rw, workspace: rw, cache: rw }
Child declares: { data: rw }
    ↓
Child gets: { data: rw }  (only what it declared)`,

	`Parent has: { data: ro }
Child declares: { data: rw }
    ↓
Error: Child requests 'rw' but parent only has 'ro'`,

	`Parent has: { data: rw, workspace: rw }
Child declares: nothing
    ↓
Child gets: null (pure function - no file access)`,
}

var seedLine = regexp.MustCompile(`^(Parent has|Child declares|Child gets|Error): (.*)$`)

// parseSet reads "{ data: rw, cache: ro }" as zone names and modes.
func parseSet(t *testing.T, s string) map[string]Mode {
	t.Helper()
	s = strings.TrimSpace(s)
	require.True(t, strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"), "not a set: %q", s)
	out := map[string]Mode{}
	for _, kv := range strings.Split(strings.Trim(s, "{} "), ",") {
		name, mode, ok := strings.Cut(kv, ":")
		require.True(t, ok, "not name: mode: %q", kv)
		out[strings.TrimSpace(name)] = Mode(strings.TrimSpace(mode))
	}
	return out
}

func TestDelegationSeedExamples(t *testing.T) {
	for i, ex := range seedExamples {
		t.Run(fmt.Sprint(i+1), func(t *testing.T) {
			got := map[string]string{}
			for _, line := range strings.Split(ex, "\n") {
				if m := seedLine.FindStringSubmatch(line); m != nil {
					got[m[1]] = m[2]
				}
			}
			var parentZones []Zone
			for name, mode := range parseSet(t, got["Parent has"]) {
				parentZones = append(parentZones, Zone{Name: name, Path: "/srv/" + name, Mode: mode})
			}
			parent := Project(parentZones)
			var decls []Decl
			if got["Child declares"] != "nothing" {
				for name, mode := range parseSet(t, got["Child declares"]) {
					decls = append(decls, Decl{Name: name, Mode: mode})
				}
			}
			child, err := parent.Derive(decls)
			switch {
			case got["Error"] != "":
				m := regexp.MustCompile(`^Child requests '(\w+)' but parent only has '(\w+)'$`).FindStringSubmatch(got["Error"])
				require.NotNil(t, m, got["Error"])
				require.EqualError(t, err, fmt.Sprintf(`child requests %q on data but parent has %q`, m[1], m[2]))
				assert.Nil(t, child)
			case strings.HasPrefix(got["Child gets"], "null"):
				require.NoError(t, err)
				assert.True(t, child.Pure())
				assert.Empty(t, child.Names())
				assert.Nil(t, child.Modes())
			default:
				require.NoError(t, err)
				set, _, _ := strings.Cut(got["Child gets"], "}")
				assert.Equal(t, parseSet(t, set+"}"), child.Modes())
			}
		})
	}
}

func project() []Zone {
	return []Zone{
		{Name: "data", Path: "/srv/data", Mode: ReadWrite},
		{Name: "input", Path: "/srv/input", Mode: ReadOnly},
		{Name: "drafts", Path: "/srv/drafts", Mode: ReadWrite, Approval: Approval{Write: PreApproved, Delete: PreApproved}},
		{Name: "final", Path: "/srv/final", Mode: ReadWrite, Approval: Approval{Write: Ask, Delete: Blocked}},
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		decls   []Decl
		want    map[string]Zone
		wantErr string
	}{
		{name: "no declaration", decls: nil, want: nil},
		{name: "empty declaration", decls: []Decl{}, want: nil},
		{name: "rw on rw, default approvals", decls: []Decl{{Name: "data", Mode: ReadWrite}},
			want: map[string]Zone{"data": {Name: "data", Path: "/srv/data", Mode: ReadWrite, Approval: Approval{Ask, Ask}}}},
		{name: "mode left out is ro", decls: []Decl{{Name: "data"}},
			want: map[string]Zone{"data": {Name: "data", Path: "/srv/data", Mode: ReadOnly, Approval: Approval{Blocked, Blocked}}}},
		{name: "ro on rw", decls: []Decl{{Name: "drafts", Mode: ReadOnly}},
			want: map[string]Zone{"drafts": {Name: "drafts", Path: "/srv/drafts", Mode: ReadOnly, Approval: Approval{Blocked, Blocked}}}},
		{name: "approvals inherited", decls: []Decl{{Name: "final", Mode: ReadWrite}},
			want: map[string]Zone{"final": {Name: "final", Path: "/srv/final", Mode: ReadWrite, Approval: Approval{Ask, Blocked}}}},
		{name: "stricter approval", decls: []Decl{{Name: "drafts", Mode: ReadWrite, Approval: Approval{Delete: Ask}}},
			want: map[string]Zone{"drafts": {Name: "drafts", Path: "/srv/drafts", Mode: ReadWrite, Approval: Approval{PreApproved, Ask}}}},
		{name: "rw on ro", decls: []Decl{{Name: "input", Mode: ReadWrite}},
			wantErr: `agent requests "rw" on input but project has "ro"`},
		{name: "looser write", decls: []Decl{{Name: "final", Mode: ReadWrite, Approval: Approval{Write: PreApproved}}},
			wantErr: `agent requests write "preApproved" on final but project has "ask"`},
		{name: "looser delete", decls: []Decl{{Name: "final", Mode: ReadWrite, Approval: Approval{Delete: Ask}}},
			wantErr: `agent requests delete "ask" on final but project has "blocked"`},
		{name: "unknown zone", decls: []Decl{{Name: "secrets", Mode: ReadOnly}},
			wantErr: `agent requests secrets, which project does not have`},
		{name: "twice", decls: []Decl{{Name: "data"}, {Name: "data"}},
			wantErr: `agent declares data twice`},
		{name: "bad mode", decls: []Decl{{Name: "data", Mode: "wr"}},
			wantErr: `agent on data: "wr" is not a mode; want "ro" or "rw"`},
		{name: "bad approval", decls: []Decl{{Name: "data", Mode: ReadWrite, Approval: Approval{Write: "never"}}},
			wantErr: `agent on data: approval write: "never" is not an approval; want "preApproved", "ask" or "blocked"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Resolve(project(), tt.decls)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			got := map[string]Zone{}
			for _, z := range a.Zones() {
				got[z.Name] = z
			}
			if tt.want == nil {
				assert.True(t, a.Pure())
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// A chain of any depth narrows and never widens, and each link is checked
// against its own parent, not the project.
func TestDeriveNests(t *testing.T) {
	top, err := Resolve(project(), []Decl{{Name: "data", Mode: ReadWrite}, {Name: "drafts", Mode: ReadWrite}, {Name: "input"}})
	require.NoError(t, err)
	mid, err := top.Derive([]Decl{{Name: "data", Mode: ReadWrite, Approval: Approval{Delete: Blocked}}, {Name: "drafts", Mode: ReadOnly}})
	require.NoError(t, err)
	assert.Equal(t, map[string]Mode{"data": ReadWrite, "drafts": ReadOnly}, mid.Modes())

	_, err = mid.Derive([]Decl{{Name: "input"}})
	require.EqualError(t, err, "child requests input, which parent does not have")
	_, err = mid.Derive([]Decl{{Name: "drafts", Mode: ReadWrite}})
	require.EqualError(t, err, `child requests "rw" on drafts but parent has "ro"`)
	_, err = mid.Derive([]Decl{{Name: "data", Mode: ReadWrite, Approval: Approval{Delete: Ask}}})
	require.EqualError(t, err, `child requests delete "ask" on data but parent has "blocked"`)

	leaf := mid
	for range 10 {
		leaf, err = leaf.Derive([]Decl{{Name: "data", Mode: ReadWrite}})
		require.NoError(t, err)
	}
	z, ok := leaf.Zone("data")
	require.True(t, ok)
	assert.Equal(t, Zone{Name: "data", Path: "/srv/data", Mode: ReadWrite, Approval: Approval{Ask, Blocked}}, z)
	pure, err := leaf.Derive(nil)
	require.NoError(t, err)
	assert.True(t, pure.Pure())
	_, err = pure.Derive([]Decl{{Name: "data"}})
	require.EqualError(t, err, "child requests data, which parent does not have")
}

func TestCheck(t *testing.T) {
	tests := []struct {
		zones   []Zone
		wantErr string
	}{
		{zones: project()},
		{zones: Defaults("/p")},
		{zones: []Zone{{Name: "a/b", Path: "/x", Mode: ReadOnly}}, wantErr: `"a/b" is not a valid name; use letters, digits, '_' or '-'`},
		{zones: []Zone{{Name: "..", Path: "/x", Mode: ReadOnly}}, wantErr: `".." is not a valid name; use letters, digits, '_' or '-'`},
		{zones: []Zone{{Name: "usr", Path: "/x", Mode: ReadOnly}}, wantErr: `"usr" is a system directory at the top of the sandbox; choose another name`},
		{zones: []Zone{{Name: "a", Path: "x", Mode: ReadOnly}}, wantErr: `a: path "x" is not absolute and clean`},
		{zones: []Zone{{Name: "a", Path: "/x", Mode: "rwx"}}, wantErr: `a: "rwx" is not a mode; want "ro" or "rw"`},
		{zones: []Zone{{Name: "a", Path: "/x", Mode: ReadOnly}, {Name: "a", Path: "/y", Mode: ReadOnly}}, wantErr: `a is defined twice`},
		{zones: []Zone{{Name: "a", Path: "/x", Mode: ReadWrite, Approval: Approval{Write: "maybe", Delete: Ask}}},
			wantErr: `a: approval write: "maybe" is not an approval; want "preApproved", "ask" or "blocked"`},
	}
	for _, tt := range tests {
		err := Check(tt.zones)
		if tt.wantErr == "" {
			assert.NoError(t, err)
		} else {
			assert.EqualError(t, err, tt.wantErr)
		}
	}
}

func TestDefaults(t *testing.T) {
	a := Project(Defaults("/proj"))
	assert.Equal(t, []string{"cache", "workspace"}, a.Names())
	z, _ := a.Zone("workspace")
	assert.Equal(t, Zone{Name: "workspace", Path: "/proj/.sandbox/workspace", Mode: ReadWrite, Approval: Approval{Ask, Ask}}, z)
}
