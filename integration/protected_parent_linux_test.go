//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtectedUnderReadOnlyParent: a read-only path above the workspace
// leaves the workspace writable, so its existing protected entries
// (.vscode, .npmrc) must stay read-only there as everywhere; the same
// writes succeed without the sandbox.
func TestProtectedUnderReadOnlyParent(t *testing.T) {
	for _, entry := range []struct{ name, setup, script string }{
		{".vscode", `mkdir .vscode && echo '{}' > .vscode/settings.json`, `echo '{"evil":1}' > .vscode/settings.json`},
		{".npmrc", `echo 'fund=false' > .npmrc`, `echo 'script-shell=/tmp/evil' > .npmrc`},
	} {
		t.Run(entry.name, func(t *testing.T) {
			run := func(boxed bool) (wrote bool, host string) {
				w := newWorld(t)
				hostGit(t, w, entry.setup)
				script := entry.script + ` && echo WROTE`
				var r result
				if boxed {
					cfg := w.config()
					cfg.ReadOnlyPaths = append(cfg.ReadOnlyPaths, filepath.Dir(w.ws))
					r = w.sandboxed(cfg, script)
				} else {
					r = w.bare(script)
				}
				p := filepath.Join(w.ws, entry.name)
				if entry.name == ".vscode" {
					p = filepath.Join(p, "settings.json")
				}
				return strings.Contains(r.stdout, "WROTE"), hostContent(p)
			}
			wrote, _ := run(false)
			require.True(t, wrote, "the write must work without the sandbox")
			wrote, host := run(true)
			assert.False(t, wrote, "the sandbox let the command change an existing protected entry")
			assert.NotContains(t, host, "evil")
			assert.NotEmpty(t, host, "the original stays in place")
		})
	}
}

func hostContent(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
