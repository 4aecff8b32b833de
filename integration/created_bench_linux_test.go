//go:build linux

package integration

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// BenchmarkCreateFiles creates 10,000 files in the sandbox's /tmp (a tmpfs, so
// the disk does not hide the cost) with a shell
// loop (one openat with O_CREAT per file and nothing else, the worst case
// for the guard), once with the guard staging new protected entries (every
// call that creates a name performed by the init's listener) and once with
// every protected name allowed, which loads the filter as it is. The
// difference divided by 10,000 is the cost of one such call.
func BenchmarkCreateFiles(b *testing.B) {
	const loop = `cd /tmp && mkdir d && cd d && for i in $(seq 10000); do : > f$i; done`
	for _, c := range []struct {
		name  string
		allow []string
	}{{"guarded", nil}, {"unguarded", corral.ProtectedNames()}} {
		b.Run(c.name, func(b *testing.B) {
			ws, err := filepath.EvalSymlinks(b.TempDir())
			require.NoError(b, err)
			cfg := corral.Config{Workspace: ws, AllowPlanting: c.allow}
			sandboxtest.Require(b, cfg)
			sb, err := corral.New(cfg)
			require.NoError(b, err)
			defer sb.Close()
			for b.Loop() {
				cmd := sb.Command(context.Background(), "sh", "-c", loop)
				out, err := cmd.CombinedOutput()
				require.NoError(b, err, string(out))
			}
		})
	}
}
