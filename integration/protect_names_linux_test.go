//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCodeFiles are, for names of the list that host programs run code
// from, a file the program reads there: cargo's rustc-wrapper, lefthook's
// local hooks, a dev container's initializeCommand, an agent's MCP
// servers, mise's hooks, pnpm's install hooks.
var runCodeFiles = []string{
	"lefthook-local.yml", ".lefthook-local.yml", ".cargo/config.toml", ".huskyrc", ".zed/tasks.json",
	".devcontainer/devcontainer.json", ".continue/config.yaml", ".roo/mcp.json", ".kiro/hooks/x.kiro.hook",
	"opencode.json", ".crush.json", ".aider.conf.yml", "mise.toml", ".mise.toml", ".tool-versions",
	".pnpmfile.cjs", "app.code-workspace", "sub/app.code-workspace",
}

// userFiles are files under names only the configuration protects
// (Config.Protect): a hooks directory core.hooksPath names (with a slash:
// at the top of the root), a module a filter driver imports and a Sublime
// Text project, whose build systems run (plain names: at any depth).
var userFiles = []string{"tools/hooks/pre-commit", "nbstripout.py", "sub/nbstripout.py", "sub/x.sublime-project"}

var userProtect = []string{"tools/hooks", "nbstripout.py", "x.sublime-project"}

// plantScript writes "planted" into each of files, making directories as
// it goes; a write that fails does not stop the others.
func plantScript(files []string) string {
	var b strings.Builder
	for _, f := range files {
		b.WriteString(`mkdir -p "$(dirname '` + f + `')"; echo planted > '` + f + `'; `)
	}
	b.WriteString("true")
	return b.String()
}

// existing writes "original" into each of files under dir, then waits for
// the directories to settle, so that the walk at the start takes the
// listing read while the sandbox was built.
func existing(t *testing.T, dir string, files []string) {
	for _, f := range files {
		p := filepath.Join(dir, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("original\n"), 0o644))
	}
	time.Sleep(3200 * time.Millisecond)
}

// Names of the list that run code, nested and at the top, existing or new,
// do not take what the command writes; without the sandbox they do.
func TestRunCodeNamesAreGuarded(t *testing.T) {
	var nested []string
	for _, f := range runCodeFiles {
		nested = append(nested, "sub/"+f)
	}
	files := append(slices.Clone(runCodeFiles), nested...)

	bare := newWorld(t)
	r := bare.bare(plantScript(files))
	require.Equal(t, 0, r.code, r.String())
	for _, f := range files {
		require.True(t, fileHas(filepath.Join(bare.ws, f), "planted"), "without the sandbox %s takes the write", f)
	}

	t.Run("new", func(t *testing.T) {
		w := newWorld(t)
		r := w.sandboxed(w.config(), plantScript(files))
		require.Equal(t, 0, r.code, r.String())
		for _, f := range files {
			assert.False(t, fileHas(filepath.Join(w.ws, f), "planted"), "%s reached the host", f)
		}
	})
	t.Run("existing", func(t *testing.T) {
		w := newWorld(t)
		existing(t, w.ws, files)
		r := w.sandboxed(w.config(), plantScript(files))
		require.Equal(t, 0, r.code, r.String())
		for _, f := range files {
			assert.True(t, fileHas(filepath.Join(w.ws, f), "original"), "%s was rewritten", f)
		}
	})
}

// Names the configuration protects are guarded as the list's are; without
// Protect, the same sandbox lets the writes land.
func TestProtectAddsNames(t *testing.T) {
	for _, mode := range []string{"new", "existing"} {
		t.Run(mode, func(t *testing.T) {
			control := newWorld(t)
			w := newWorld(t)
			if mode == "existing" {
				existing(t, control.ws, userFiles)
				existing(t, w.ws, userFiles)
			}
			r := control.sandboxed(control.config(), plantScript(userFiles))
			require.Equal(t, 0, r.code, r.String())
			for _, f := range userFiles {
				require.True(t, fileHas(filepath.Join(control.ws, f), "planted"), "without Protect %s takes the write", f)
			}

			cfg := w.config()
			cfg.Protect = userProtect
			r = w.sandboxed(cfg, plantScript(userFiles))
			require.Equal(t, 0, r.code, r.String())
			for _, f := range userFiles {
				assert.False(t, fileHas(filepath.Join(w.ws, f), "planted"), "%s reached the host", f)
			}
		})
	}
}
