package corral

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/ladder"
	"github.com/corralhq/corral/nsjail"
	"github.com/corralhq/corral/seatbelt"
)

// srcRoot is the module's source directory, found from this file: the
// unprivileged run starts the test binary elsewhere.
func srcRoot(t *testing.T) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Dir(self)
}

// layerConsts returns the constants of type Layer declared in file, by
// value.
func layerConsts(t *testing.T, file, typ string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(srcRoot(t), file), nil, 0)
	require.NoError(t, err)
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
				continue
			}
			for i, name := range vs.Names {
				lit := vs.Values[i].(*ast.BasicLit)
				v, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				out[v] = name.Name
			}
		}
	}
	return out
}

// TestLayersAllDocumented: every Layer constant is in the package's list
// and in docs/layers.md's table of setup errors, and nothing else is.
func TestLayersAllDocumented(t *testing.T) {
	consts := layerConsts(t, "layers.go", "Layer")
	var values []string
	for v := range consts {
		values = append(values, v)
	}
	var listed []string
	for _, l := range layers {
		listed = append(listed, string(l))
	}
	assert.ElementsMatch(t, values, listed, "the layers list holds every Layer constant once")

	doc, err := os.ReadFile(filepath.Join(srcRoot(t), "docs", "layers.md"))
	require.NoError(t, err)
	table := map[string]string{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "`Layer") {
			continue
		}
		table[strings.Trim(strings.TrimSpace(cells[1]), "`")] = strings.Trim(strings.TrimSpace(cells[2]), "`")
	}
	assert.Equal(t, consts, table, "docs/layers.md's table of setup errors names each Layer with its constant")
}

// TestLayersNsjailMapped: every layer the Linux backend reports is a
// documented Layer under the same name, but exec: that failure is an
// ExecError.
func TestLayersNsjailMapped(t *testing.T) {
	consts := layerConsts(t, "nsjail/layer.go", "Layer")
	var declared []string
	for v := range consts {
		declared = append(declared, v)
	}
	var reported []string
	for _, l := range nsjail.Layers() {
		reported = append(reported, string(l))
		if l == nsjail.LayerExec {
			continue
		}
		assert.Contains(t, layers, Layer(l), "nsjail.%s has no corral.Layer", consts[string(l)])
	}
	assert.ElementsMatch(t, declared, reported, "nsjail.Layers lists every nsjail.Layer constant once")
}

// TestLayersSeatbeltMapped: every layer the Seatbelt runner reports is a
// documented Layer under the same name.
func TestLayersSeatbeltMapped(t *testing.T) {
	consts := layerConsts(t, "seatbelt/runner.go", "Layer")
	var declared, reported []string
	for v := range consts {
		declared = append(declared, v)
	}
	for _, l := range seatbelt.Layers() {
		reported = append(reported, string(l))
		assert.Contains(t, layers, Layer(l), "seatbelt.%s has no corral.Layer", consts[string(l)])
	}
	assert.ElementsMatch(t, declared, reported, "seatbelt.Layers lists every seatbelt.Layer constant once")
}

// TestLayersNoUntypedNames fails when a layer is named by a string literal
// anywhere outside the constants: in a SetupError or nsjail failure, an
// assignment to a Layer field, a failureOf call or a conversion.
func TestLayersNoUntypedNames(t *testing.T) {
	var found []string
	root := srcRoot(t)
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		isLit := func(e ast.Expr) bool { b, ok := e.(*ast.BasicLit); return ok && b.Kind == token.STRING }
		report := func(n ast.Node) { found = append(found, fset.Position(n.Pos()).String()) }
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Layer" && isLit(n.Value) {
					report(n)
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if s, ok := l.(*ast.SelectorExpr); ok && s.Sel.Name == "Layer" && i < len(n.Rhs) && isLit(n.Rhs[i]) {
						report(n)
					}
				}
			case *ast.CallExpr:
				name := ""
				switch f := n.Fun.(type) {
				case *ast.Ident:
					name = f.Name
				case *ast.SelectorExpr:
					name = f.Sel.Name
				}
				if (name == "failureOf" || name == "Layer") && len(n.Args) > 0 && isLit(n.Args[0]) {
					report(n)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 100, "the module's sources were read")
	assert.Empty(t, found, "layers named by a string literal instead of a Layer constant")
}

func TestLayersDoctorNamesAreLayers(t *testing.T) {
	h := ladder.ProbeFully()
	for _, l := range h.Layers {
		assert.True(t, slices.Contains(layers, l.Name), "doctor reports %q", l.Name)
	}
}

// TestLayersMatchLadder: the public constants are package ladder's, value
// for value, name for name.
func TestLayersMatchLadder(t *testing.T) {
	for _, typ := range []string{"Layer", "Rung", "Fallback"} {
		public := layerConsts(t, "layers.go", typ)
		assert.NotEmpty(t, public, typ)
		assert.Equal(t, layerConsts(t, "internal/ladder/layers.go", typ), public, typ)
	}
}
