package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
