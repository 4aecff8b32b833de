package corral

import (
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArchitectureImports keeps docs/architecture.md's table of imports
// true: each row's packages import exactly the packages of the module it
// lists (on Linux, tests left out), and every top-level package has a row.
func TestArchitectureImports(t *testing.T) {
	const module = "github.com/corralhq/corral"
	root := srcRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "### Imports")
	require.True(t, ok, "architecture.md has an Imports section")
	section, _, _ = strings.Cut(section, "\n## ")

	names := regexp.MustCompile("`([^`]+)`")
	pkgs := func(cell string) []string {
		var out []string
		if strings.Contains(cell, "the root package") || strings.Contains(cell, "(root)") {
			out = append(out, ".")
		}
		for _, m := range names.FindAllStringSubmatch(cell, -1) {
			if m[1] != "corral" {
				out = append(out, m[1])
			}
		}
		slices.Sort(out)
		return out
	}
	ctx := build.Default
	ctx.GOOS = "linux"
	rows := map[string]bool{}
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "package" {
			continue
		}
		want := pkgs(cells[2])
		for _, p := range pkgs(cells[1]) {
			rows[p] = true
			bp, err := ctx.ImportDir(filepath.Join(root, p), 0)
			require.NoError(t, err, p)
			var got []string
			for _, imp := range bp.Imports {
				switch {
				case imp == module:
					got = append(got, ".")
				case strings.HasPrefix(imp, module+"/"):
					got = append(got, strings.TrimPrefix(imp, module+"/"))
				}
			}
			slices.Sort(got)
			assert.Equal(t, want, got, "imports of %s", p)
		}
	}
	require.NotEmpty(t, rows)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() || slices.Contains([]string{"internal", "examples", "integration", "docs", "scripts", "testdata", "cmd"}, e.Name()) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := ctx.ImportDir(filepath.Join(root, e.Name()), 0); err != nil {
			continue // no Go package here
		}
		assert.True(t, rows[e.Name()], "architecture.md's imports table has no row for %s", e.Name())
	}
	cmds, err := os.ReadDir(filepath.Join(root, "cmd"))
	require.NoError(t, err)
	for _, e := range cmds {
		assert.True(t, rows["cmd/"+e.Name()], "architecture.md's imports table has no row for cmd/%s", e.Name())
	}
}
