package guard

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListIsDocumented keeps docs/layers.md's table of protected names the list
// itself, row for row.
func TestListIsDocumented(t *testing.T) {
	_, self, _, ok := runtime.Caller(0)
	require.True(t, ok)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "..", "docs", "layers.md"))
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| (any depth|top of the root) \\| (.+) \\|$")
	var got []Entry
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		got = append(got, Entry{Name: m[1], Anywhere: m[2] == "any depth", What: m[3]})
	}
	assert.Equal(t, List(), got)
}

// A name the configuration protects joins the list: a plain one at every
// depth, one with a slash at the top of each root; a listed one stays as
// listed.
func TestAlso(t *testing.T) {
	t.Cleanup(func() { user = nil })
	n := len(List())
	Also([]string{".git", "nbstripout.py", "tools/hooks", "nbstripout.py"})
	e, ok := Lookup("nbstripout.py")
	require.True(t, ok)
	assert.Equal(t, Entry{Name: "nbstripout.py", Anywhere: true, What: UserWhat}, e)
	e, ok = Lookup("tools/hooks")
	require.True(t, ok)
	assert.False(t, e.Anywhere)
	e, _ = Lookup(".git")
	assert.NotEqual(t, UserWhat, e.What)
	assert.Len(t, List(), n+2)
	assert.Equal(t, []string{"nbstripout.py", "tools/hooks"}, Names()[n:])
	_, ok = Lookup("other")
	assert.False(t, ok)
}
