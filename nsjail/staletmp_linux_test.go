package nsjail

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepStaleTmp: the temp dir of a process of this PID namespace that
// is gone is removed; a live process's, and one of another namespace, stay.
func TestSweepStaleTmp(t *testing.T) {
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	base := t.TempDir()
	ns := pidNS()
	stale := filepath.Join(base, fmt.Sprintf("corral-%d-%d-1", ns, gone.Process.Pid))
	live := filepath.Join(base, fmt.Sprintf("corral-%d-%d-2", ns, os.Getpid()))
	other := filepath.Join(base, fmt.Sprintf("corral-%d-%d-3", ns+1, gone.Process.Pid))
	for _, d := range []string{stale, live, other} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
	}
	sweepOnce = sync.Once{}
	sweepStaleTmp(base)
	assert.NoDirExists(t, stale)
	assert.DirExists(t, live)
	assert.DirExists(t, other)
}
