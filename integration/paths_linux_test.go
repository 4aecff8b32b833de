package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// A writable path may be a single file. The protected names are looked up
// beneath every writable root, and beneath a file the kernel answers
// ENOTDIR rather than ENOENT: that must not stop the sandbox.
func TestWritableFile(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			w := newWorld(t)
			file := filepath.Join(w.outside, "notes.txt")
			require.NoError(t, os.WriteFile(file, []byte("host\n"), 0o644))
			cfg := w.config()
			cfg.WritablePaths = []string{file}
			sb, _ := rungSandbox(t, rung, cfg)
			c := sb.Command(t.Context(), "sh", "-c", `echo sandbox >> "$1"`, "sh", file)
			out, err := c.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.True(t, fileHas(file, "host\nsandbox\n"), "the writable file was written")
		})
	}
}

// moveAside attacks rename a directory above a read-only, protected or
// hidden path: its mount (or Landlock rule) moves along with it, and a
// writable stand-in can take its place.
var moveAside = []struct {
	name   string
	setup  func(t *testing.T, ws string) (cfg func(*corral.Config))
	script string
	// escaped judges from the host whether the path was replaced.
	escaped func(ws string) bool
}{
	{
		name: "swap .git for a copy with a planted hook",
		setup: func(t *testing.T, ws string) func(*corral.Config) {
			require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644))
			return nil
		},
		script: `cp -r .git .git-new && echo escaped > .git-new/hooks/pre-commit &&
			mv .git .git-old && mv .git-new .git`,
		escaped: func(ws string) bool { return fileHas(filepath.Join(ws, ".git/hooks/pre-commit"), "escaped") },
	},
	{
		name: "replace a nested read-only directory",
		setup: func(t *testing.T, ws string) func(*corral.Config) {
			data := filepath.Join(ws, "agent", "data")
			require.NoError(t, os.MkdirAll(data, 0o755))
			return func(c *corral.Config) { c.ReadOnlyPaths = append(c.ReadOnlyPaths, data) }
		},
		script:  `mv agent agent-old && mkdir -p agent/data && echo escaped > agent/data/memory.md`,
		escaped: func(ws string) bool { return fileHas(filepath.Join(ws, "agent/data/memory.md"), "escaped") },
	},
	{
		name: "move a nested hidden directory away",
		setup: func(t *testing.T, ws string) func(*corral.Config) {
			keys := filepath.Join(ws, "conf", "keys")
			require.NoError(t, os.MkdirAll(keys, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(keys, "id"), []byte("key"), 0o600))
			return func(c *corral.Config) { c.HiddenPaths = append(c.HiddenPaths, keys) }
		},
		script:  `mv conf conf-old`,
		escaped: func(ws string) bool { return !exists(filepath.Join(ws, "conf/keys/id")) },
	},
}

func TestMovingProtectedPathsAside(t *testing.T) {
	for _, a := range moveAside {
		t.Run(a.name, func(t *testing.T) {
			bare := newWorld(t)
			a.setup(t, bare.ws)
			r := bare.bare(a.script)
			require.True(t, a.escaped(bare.ws), "the probe must work without the sandbox:\n%s", r)
			for _, rung := range layRungs {
				t.Run(string(rung), func(t *testing.T) {
					w := newWorld(t)
					cfg := w.config()
					if mod := a.setup(t, w.ws); mod != nil {
						mod(&cfg)
					}
					sb, _ := rungSandbox(t, rung, cfg)
					c := sb.Command(t.Context(), "sh", "-c", a.script)
					c.Env = w.env()
					out, _ := c.CombinedOutput()
					assert.False(t, a.escaped(w.ws), "escaped the sandbox:\n%s", out)
				})
			}
		})
	}
}
