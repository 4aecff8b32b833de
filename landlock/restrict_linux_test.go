package landlock

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/hosttest"
)

// childEnv carries the directory to a re-executed copy of the test binary,
// which restricts itself: Landlock cannot be lifted once applied.
const childEnv = "CORRAL_LANDLOCK_TEST_DIR"

type childResult struct {
	WriteRW, WriteBesideHidden, WriteRO, ReadHidden, ListRoot, Kill string
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	if e, ok := err.(syscall.Errno); ok {
		errno = e
		return errno.Error()
	}
	return err.Error()
}

func TestRestrictChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestRestrict")
	}
	runtime.LockOSThread() // Restrict confines this thread only
	p, err := Build(Input{ABI: ABI(), Scope: ABI() >= ABIScope, Entries: []Entry{
		{"/", ReadOnly},
		{filepath.Join(dir, "rw"), ReadWrite},
		{filepath.Join(dir, "rw", "hidden"), None},
	}}, OS())
	require.NoError(t, err)
	require.NoError(t, Restrict(p))
	var r childResult
	r.WriteRW = errString(os.WriteFile(filepath.Join(dir, "rw", "sub", "new"), []byte("x"), 0o644))
	r.WriteBesideHidden = errString(os.WriteFile(filepath.Join(dir, "rw", "new"), []byte("x"), 0o644))
	r.WriteRO = errString(os.WriteFile(filepath.Join(dir, "ro", "new"), []byte("x"), 0o644))
	_, err = os.ReadFile(filepath.Join(dir, "rw", "hidden", "secret"))
	r.ReadHidden = errString(err)
	_, err = os.ReadDir(filepath.Join(dir, "rw"))
	r.ListRoot = errString(err)
	r.Kill = errString(syscall.Kill(os.Getppid(), 0))
	require.NoError(t, json.NewEncoder(os.Stdout).Encode(r))
}

func TestRestrict(t *testing.T) {
	if ABI() < 1 {
		hosttest.Skip(t, "kernel without Landlock: "+Why())
	}
	dir := t.TempDir()
	for _, d := range []string{"rw/hidden", "rw/sub", "ro"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rw", "hidden", "secret"), []byte("s"), 0o644))
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestrictChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var r childResult
	require.NoError(t, json.Unmarshal(firstLine(out), &r), "%s", out)
	assert.Equal(t, "ok", r.WriteRW)
	assert.Equal(t, "permission denied", r.WriteBesideHidden, "a carved directory takes no new entries")
	assert.Equal(t, "permission denied", r.WriteRO)
	assert.Equal(t, "permission denied", r.ReadHidden)
	assert.Equal(t, "permission denied", r.ListRoot, "the parent of a hidden path cannot be listed")
	if ABI() >= ABIScope {
		assert.Equal(t, "operation not permitted", r.Kill, "signals stay inside the domain")
	} else {
		assert.Equal(t, "ok", r.Kill)
	}
}

func firstLine(b []byte) []byte {
	for i, c := range b {
		if c == '\n' {
			return b[:i]
		}
	}
	return b
}
