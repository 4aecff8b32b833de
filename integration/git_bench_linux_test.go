//go:build linux

package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// BenchmarkGitCommit commits one change inside a sandbox on a repository
// of about 10k objects, with its .git staged and merged back, with .git
// left writable as is, and under bubblewrap with the same isolation
// (read-only root, the workspace writable, /dev, /proc, a private /tmp,
// user and PID namespaces). scripts/bench-git.sh measures the same through
// the CLI. The paired run alternates a staged commit with one under
// bubblewrap and reports the medians and the median ratio. Before each
// timed command the sandboxes built ahead are let finish building
// (Sandbox.Warm), so that neither command shares the machine with that
// build: an agent's commands come seconds apart, and a sandbox is built
// in between.
func BenchmarkGitCommit(b *testing.B) {
	ws, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	for i := range 100 {
		d := filepath.Join(ws, fmt.Sprintf("d%d", i))
		require.NoError(b, os.Mkdir(d, 0o755))
		for j := range 100 {
			require.NoError(b, os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d", j)), fmt.Appendf(nil, "%d %d\n", i, j), 0o644))
		}
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + ws, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com"}
	setup := exec.Command("sh", "-c", "git init -q . && git config gc.auto 0 && git add -A && git commit -qm init")
	setup.Dir, setup.Env = ws, env
	out, err := setup.CombinedOutput()
	require.NoError(b, err, "%s", out)
	const commit = "echo x >> d1/f1 && git commit -qam x"

	for _, c := range []struct {
		name  string
		allow []string
	}{{"staged", nil}, {"unstaged", []string{".git"}}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := corral.Config{Workspace: ws, AllowPlanting: c.allow}
			sandboxtest.Require(b, cfg)
			sb, err := corral.New(cfg)
			require.NoError(b, err)
			defer sb.Close()
			for b.Loop() {
				b.StopTimer()
				require.NoError(b, sb.Warm(context.Background()))
				b.StartTimer()
				cmd := sb.Command(context.Background(), "sh", "-c", commit)
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				require.NoError(b, err, "%s", out)
			}
		})
	}
	bwrapCommit := func(b *testing.B) {
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			b.Skip("bwrap not installed")
		}
		cmd := exec.Command(bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
			"--bind", ws, ws, "--unshare-user", "--unshare-pid", "--new-session", "--die-with-parent", "sh", "-c", commit)
		cmd.Dir, cmd.Env = ws, env
		out, err := cmd.CombinedOutput()
		require.NoError(b, err, "%s", out)
	}
	b.Run("bwrap", func(b *testing.B) {
		for b.Loop() {
			bwrapCommit(b)
		}
	})
	// One staged commit and one under bwrap in turn, so that a machine
	// whose load drifts slows both alike: the medians of each and of the
	// pairs' ratios.
	b.Run("paired", func(b *testing.B) {
		cfg := corral.Config{Workspace: ws}
		sandboxtest.Require(b, cfg)
		sb, err := corral.New(cfg)
		require.NoError(b, err)
		defer sb.Close()
		var tc, tb, ratio []float64
		for b.Loop() {
			require.NoError(b, sb.Warm(context.Background()))
			start := time.Now()
			cmd := sb.Command(context.Background(), "sh", "-c", commit)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			require.NoError(b, err, "%s", out)
			c := time.Since(start).Seconds() * 1000
			require.NoError(b, sb.Warm(context.Background()))
			start = time.Now()
			bwrapCommit(b)
			w := time.Since(start).Seconds() * 1000
			tc, tb, ratio = append(tc, c), append(tb, w), append(ratio, c/w)
		}
		median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
		b.ReportMetric(median(tc), "corral-ms")
		b.ReportMetric(median(tb), "bwrap-ms")
		b.ReportMetric(median(ratio), "ratio")
	})
}
