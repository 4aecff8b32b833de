package tools

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/childcover"
	"github.com/corralhq/corral/internal/sandboxtest"
)

func TestMain(m *testing.M) {
	if childcover.Init(corral.Init) {
		return
	}
	// Example runs a sandbox and cannot skip itself: leave it out, saying
	// why, on a host that cannot build one.
	if why := sandboxtest.Unavailable(corral.Config{}); why != "" {
		fmt.Println("skipping Example:", why)
		flag.Set("test.skip", "^Example$")
	}
	os.Exit(m.Run())
}

// tree is a workspace with a sibling directory outside it, laid out as
// files and symlinks the path tests walk through.
type tree struct {
	base, ws, outside string
}

func newTree(t *testing.T) tree {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	tr := tree{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{tr.ws, tr.outside, filepath.Join(tr.ws, "sub")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	files := map[string]string{
		filepath.Join(tr.ws, "a.txt"):           "alpha\n",
		filepath.Join(tr.ws, "sub", "b.txt"):    "beta\n",
		filepath.Join(tr.outside, "secret.txt"): "outside secret\n",
	}
	for p, content := range files {
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	links := map[string]string{
		"link-out": filepath.Join(tr.outside, "secret.txt"),
		"link-in":  "a.txt",
		"dir-out":  tr.outside,
		"dir-in":   "sub",
		"dangling": filepath.Join(tr.outside, "new.txt"),
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(tr.ws, name)))
	}
	return tr
}
