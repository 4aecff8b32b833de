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

// TestListIsDocumented keeps README's table of protected names the list
// itself, row for row.
func TestListIsDocumented(t *testing.T) {
	_, self, _, ok := runtime.Caller(0)
	require.True(t, ok)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "..", "README.md"))
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| (any depth|top of the root) \\| (.+) \\|$")
	var got []Entry
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		got = append(got, Entry{Name: m[1], Anywhere: m[2] == "any depth", What: m[3]})
	}
	assert.Equal(t, List(), got)
}
