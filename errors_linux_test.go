package corral_test

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// typedSandbox is a sandbox over a fresh workspace holding a file that
// cannot be executed, or a skip when the host has none.
func typedSandbox(t *testing.T) (*corral.Sandbox, string) {
	t.Helper()
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "data.txt"), []byte("#!/bin/sh\necho ran\n"), 0o644))
	cfg := corral.Config{Workspace: ws}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	return sb, ws
}

// TestErrorsTyped checks that each way a command fails to start is told
// apart with errors.Is and errors.As alone.
func TestErrorsTyped(t *testing.T) {
	sb, ws := typedSandbox(t)
	cases := []struct {
		name  string
		cmd   string
		dir   string
		is    error        // the error wraps this
		layer corral.Layer // a SetupError of this layer, else an ExecError
		path  string       // the SetupError's path
	}{
		{"not found on PATH", "no-such-command-xyz", "", corral.ErrNotFound, "", ""},
		{"not found by path", filepath.Join(ws, "missing"), "", corral.ErrNotFound, "", ""},
		{"not executable", filepath.Join(ws, "data.txt"), "", corral.ErrNotExecutable, "", ""},
		{"a directory", ws, "", corral.ErrNotExecutable, "", ""},
		{"workdir missing", "true", filepath.Join(ws, "nope"), fs.ErrNotExist, corral.LayerWorkdir, filepath.Join(ws, "nope")},
		{"workdir a file", "true", filepath.Join(ws, "data.txt"), syscall.ENOTDIR, corral.LayerWorkdir, filepath.Join(ws, "data.txt")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := sb.Command(t.Context(), c.cmd)
			cmd.Dir = c.dir
			err := cmd.Run()
			require.Error(t, err)
			assert.ErrorIs(t, err, c.is)
			if c.layer == "" {
				var ee *corral.ExecError
				require.ErrorAs(t, err, &ee)
				assert.Equal(t, c.cmd, ee.Name)
				return
			}
			var se *corral.SetupError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, c.layer, se.Layer)
			assert.Equal(t, c.path, se.Path)
			assert.False(t, errors.Is(err, corral.ErrNotFound), "a missing workdir is no missing command")
		})
	}
}

// TestErrorsInitDeath crashes the init of a running command from outside:
// a SetupError of LayerInit, not a status the command never had.
func TestErrorsInitDeath(t *testing.T) {
	sb, _ := typedSandbox(t)
	c := sb.Command(t.Context(), "sleep", "100")
	require.NoError(t, c.Start())
	require.NoError(t, queueSignal(c.Process.Pid, syscall.SIGILL))
	err := c.Wait()
	var se *corral.SetupError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, corral.LayerInit, se.Layer)
	var ee *corral.ExitError
	assert.False(t, errors.As(err, &ee), "no exit status")
}

// queueSignal queues sig to pid with the code sigqueue uses, which a Go
// program takes for a fault of its own when sig is SIGILL.
func queueSignal(pid int, sig syscall.Signal) error {
	var info [128]byte
	binary.LittleEndian.PutUint32(info[0:], uint32(sig))
	binary.LittleEndian.PutUint32(info[8:], uint32(0xffffffff)) // SI_QUEUE
	binary.LittleEndian.PutUint32(info[16:], uint32(os.Getpid()))
	binary.LittleEndian.PutUint32(info[20:], uint32(os.Getuid()))
	_, _, errno := syscall.Syscall(syscall.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(sig), uintptr(unsafe.Pointer(&info[0])))
	if errno != 0 {
		return errno
	}
	return nil
}
