package nsjail

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/limits"
)

// The jail gives each sandbox a cgroup of its own in the hierarchy it was
// handed, with the limits a cgroup enforces, and moves the init into it
// before sending the setup. This host's kernel may have no cgroup v2
// controllers: a directory laid out like cgroupfs stands in, so what is
// checked is the files written, not their enforcement.
func TestJailCgroupFiles(t *testing.T) {
	root := t.TempDir()
	for name, v := range map[string]string{"cgroup.controllers": "cpu memory pids", "cgroup.subtree_control": "cpu memory pids"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(v), 0o644))
	}
	h, err := limits.FindHierarchy(root, "/")
	require.NoError(t, err)
	j := newJail(t, Options{Direct: true, Cgroup: h, Limits: limits.Set{Pids: 300, CPUs: 0.5, Memory: 1 << 30}})
	p, out := run(t, j, "sh", "-c", "echo ran")
	assert.Equal(t, "ran\n", out)

	dirs, err := filepath.Glob(filepath.Join(root, fmt.Sprintf("corral-%d-*", p.Pid())))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	dir := dirs[0]
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	assert.Equal(t, fmt.Sprint(p.Pid()), read("cgroup.procs"), "the init joined it")
	assert.Equal(t, "300", read("pids.max"))
	assert.Equal(t, "50000 100000", read("cpu.max"))
	assert.Equal(t, "1073741824", read("memory.max"))
	assert.Empty(t, p.LimitsHit())
}

// A cgroup the jail cannot make fails the sandbox with layer limits.
func TestJailCgroupFailure(t *testing.T) {
	h := &limits.Hierarchy{Dir: filepath.Join(t.TempDir(), "missing")}
	j := newJail(t, Options{Direct: true, Cgroup: h, Limits: limits.Set{Pids: 10}})
	_, _, err := start(t, j, "true")
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, LayerLimits, e.Layer)
}

// The init reports the limits the command hit with its exit.
func TestJailReportsLimitsHit(t *testing.T) {
	j := newJail(t, Options{Direct: true, Limits: limits.Set{CPUTime: 1, TmpSize: 1 << 20}})
	p, _, err := start(t, j, "sh", "-c", "head -c 2M /dev/zero > /tmp/f; kill -XCPU $$")
	require.NoError(t, err)
	_, err = p.Wait()
	require.NoError(t, err)
	assert.Equal(t, []limits.Name{limits.TmpSize, limits.CPUTime}, p.LimitsHit())
}
