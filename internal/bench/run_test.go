package bench

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/hosttest"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// recorder is a spawner that notes each call under its name.
type recorder struct {
	name string
	log  *[]string
	mu   *sync.Mutex
	n    atomic.Int64
	fail int64 // the call number that fails, 0 for none
}

func (r *recorder) spawn(context.Context) error {
	n := r.n.Add(1)
	if r.log != nil {
		r.mu.Lock()
		*r.log = append(*r.log, r.name)
		r.mu.Unlock()
	}
	if n == r.fail {
		return errors.New(r.name + " failed")
	}
	return nil
}

func TestLatenciesAlternateAfterOneUntimedWarmUp(t *testing.T) {
	var log []string
	var mu sync.Mutex
	ours := &recorder{name: "corral", log: &log, mu: &mu}
	theirs := &recorder{name: "bwrap", log: &log, mu: &mu}
	mine, other, err := latencies(context.Background(), 3, ours, theirs)
	require.NoError(t, err)
	assert.Len(t, mine, 3)
	assert.Len(t, other, 3)
	assert.Equal(t, []string{"corral", "bwrap", "corral", "bwrap", "corral", "bwrap", "corral", "bwrap"}, log)
}

func TestLatenciesAlone(t *testing.T) {
	ours := &recorder{name: "corral"}
	mine, other, err := latencies(context.Background(), 4, ours, nil)
	require.NoError(t, err)
	assert.Len(t, mine, 4)
	assert.Nil(t, other)
	assert.Equal(t, int64(5), ours.n.Load())
}

func TestLatenciesStopAtTheFirstFailure(t *testing.T) {
	_, _, err := latencies(context.Background(), 10, &recorder{name: "corral", fail: 3}, nil)
	require.EqualError(t, err, "corral failed")
}

func TestThroughputSpawnsExactlyTotal(t *testing.T) {
	for _, tc := range []struct{ total, parallel int }{{10, 1}, {10, 3}, {2, 8}, {100, 8}} {
		s := &recorder{name: "x"}
		perSec, err := throughput(context.Background(), tc.total, tc.parallel, s)
		require.NoError(t, err)
		assert.Equal(t, int64(tc.total), s.n.Load(), "total %d parallel %d", tc.total, tc.parallel)
		assert.Positive(t, perSec)
	}
}

func TestThroughputReportsAFailure(t *testing.T) {
	_, err := throughput(context.Background(), 50, 4, &recorder{name: "x", fail: 7})
	require.EqualError(t, err, "x failed")
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Runs: 0, Parallel: 1}, "runs 0: want at least 1"},
		{Options{Runs: 1, Parallel: 0}, "parallel 0: want at least 1"},
		{Options{Runs: 1, Parallel: 1, ParentHeap: -1}, "parent heap -1"},
		{Options{Runs: 1, Parallel: 1, ParentHeap: 1 << 50}, "more than the"},
	} {
		err := tc.o.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
	assert.NoError(t, Options{Runs: 1, Parallel: 1}.Validate())
}

func TestGrowTouchesEveryPage(t *testing.T) {
	assert.Nil(t, Grow(0))
	b := Grow(1 << 20)
	require.Len(t, b, 1<<20)
	assert.Equal(t, byte(1), b[0])
	assert.Equal(t, byte(1), b[len(b)-4096])
}

func TestBwrapArgs(t *testing.T) {
	assert.Equal(t, []string{
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--bind", "/w", "/w", "--unshare-user", "--unshare-pid", "--new-session",
		"--die-with-parent", "--chdir", "/w", "/bin/true",
	}, BwrapArgs("/w", "/bin/true"))
}

// A short real run: every figure comes from real sandboxes.
func TestRunMeasuresRealSpawns(t *testing.T) {
	sandboxtest.Require(t, corral.Config{})
	r, err := Run(context.Background(), Options{Runs: 5, Parallel: 2})
	require.NoError(t, err)
	assert.Equal(t, 5, r.Runs)
	assert.Equal(t, 2, r.Parallel)
	assert.Positive(t, r.P50us)
	assert.LessOrEqual(t, r.P50us, r.P90us)
	assert.LessOrEqual(t, r.P90us, r.P99us)
	assert.Positive(t, r.PerSec)
	assert.Positive(t, r.InitRSSKB)
	// An init is a small Go program, not a copy of this test binary's heap.
	assert.Less(t, r.InitRSSKB, int64(64<<10))
	assert.Nil(t, r.Bwrap)
}

func TestRunVsBwrap(t *testing.T) {
	sandboxtest.Require(t, corral.Config{})
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed (.ci/run installs it)")
	}
	r, err := Run(context.Background(), Options{Runs: 3, Parallel: 2, VsBwrap: true, Workspace: t.TempDir()})
	require.NoError(t, err)
	require.NotNil(t, r.Bwrap)
	assert.Positive(t, r.Bwrap.P50us)
	assert.Positive(t, r.Bwrap.PerSec)
	assert.Positive(t, r.RatioP50)
	assert.Positive(t, r.RatioPerSec)
}

// mcpServerName is the name under which this test binary is corral-mcp
// (see TestMain).
const mcpServerName = "corral-mcp"

func TestRunVsMCP(t *testing.T) {
	sandboxtest.Require(t, corral.Config{})
	server := hosttest.CopySelf(t, mcpServerName)
	r, err := Run(context.Background(), Options{Runs: 3, Parallel: 1, VsMCP: true, MCPServer: server})
	require.NoError(t, err)
	require.NotNil(t, r.MCP)
	assert.Positive(t, r.MCP.P50us)
	assert.Positive(t, r.MCP.LibraryP50us)
	assert.Positive(t, r.MCP.RatioP50)
	var b strings.Builder
	require.NoError(t, r.WriteJSON(&b))
	assert.Contains(t, b.String(), `"ratio_mcp_p50"`)
}

func TestRunVsMCPWithoutServer(t *testing.T) {
	_, err := Run(context.Background(), Options{Runs: 1, Parallel: 1, VsMCP: true, MCPServer: filepath.Join(t.TempDir(), mcpServerName)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), mcpServerName)
}

func TestRunVsBwrapWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Run(context.Background(), Options{Runs: 1, Parallel: 1, VsBwrap: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bwrap not found on PATH")
}

func TestRunReportsABrokenSandbox(t *testing.T) {
	_, err := Run(context.Background(), Options{Runs: 1, Parallel: 1, Workspace: "/no/such/workspace"})
	var se *SandboxError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "/no/such/workspace")
}
