package nsjail

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// stdio returns three descriptors for a command, closed with the test.
func stdio(t *testing.T) [3]*os.File {
	t.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { null.Close() })
	return [3]*os.File{null, null, null}
}

// The states a Process goes through, driven by a fake init on a real
// socket: built, running once the init says the command started, released
// by Wait.
func TestProcessStates(t *testing.T) {
	s := startSleeper(t)
	p, init := fakeProcess(t, s, false)
	assert.Equal(t, stateBuilt, p.state)

	done := make(chan error)
	go func() { done <- p.exec(&Command{Path: "true", Args: []string{"true"}, Stdio: stdio(t)}) }()
	var req execReq
	files, err := recv(init, &req)
	require.NoError(t, err)
	assert.Len(t, files, 3, "stdio travels with the request")
	closeFiles(files)
	require.NoError(t, send(init, reply{Started: true}))
	require.NoError(t, <-done)
	assert.Equal(t, stateRunning, p.state)

	require.NoError(t, send(init, reply{Exited: true, Status: 0, Dropped: []string{"held .git/hooks/x"}}))
	ex, err := p.Wait()
	require.NoError(t, err)
	assert.True(t, ex.Status.Exited())
	assert.Equal(t, []string{"held .git/hooks/x"}, p.Dropped())
	assert.Equal(t, stateReleased, p.state)
	assert.ErrorIs(t, p.Kill(), os.ErrProcessDone)
	assert.True(t, s.alive(), "a released Process signals nothing")
}

// A command the init refuses leaves the sandbox built, with the init's
// reason.
func TestProcessExecRefused(t *testing.T) {
	s := startSleeper(t)
	p, init := fakeProcess(t, s, false)
	defer p.release()
	done := make(chan error)
	go func() { done <- p.exec(&Command{Path: "nope", Stdio: stdio(t)}) }()
	files, err := recv(init, &execReq{})
	require.NoError(t, err)
	closeFiles(files)
	require.NoError(t, send(init, reply{Fail: execFailure("nope", &os.PathError{Op: "fork/exec", Path: "nope", Err: unix.ENOENT})}))
	err = <-done
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, LayerExec, e.Layer)
	assert.Equal(t, stateBuilt, p.state)
}

// A namespaced sandbox's running command is killed by asking its init, so
// the init finishes as after any command; an init that cannot be asked is
// killed.
func TestProcessKillWhileRunning(t *testing.T) {
	s := startSleeper(t)
	p, init := fakeProcess(t, s, false)
	defer p.release()
	p.state = stateRunning
	require.NoError(t, p.Kill())
	var ctl control
	_, err := recv(init, &ctl)
	require.NoError(t, err)
	assert.True(t, ctl.Kill)
	assert.True(t, s.alive(), "asked, not killed")

	init.Close()
	require.NoError(t, p.Kill(), "the socket is gone: the init is killed instead")
	pollIn(t, s.pidfd)
	assert.False(t, s.alive())
}

// A built sandbox (no command yet) is killed outright; one already gone is
// os.ErrProcessDone.
func TestProcessKillBuilt(t *testing.T) {
	s := startSleeper(t)
	p, _ := fakeProcess(t, s, false)
	defer p.release()
	require.NoError(t, p.Kill())
	pollIn(t, s.pidfd)
	require.EqualError(t, s.cmd.Wait(), "signal: killed")
	// Reaped: the pidfd now names a process that is gone.
	assert.ErrorIs(t, p.Kill(), os.ErrProcessDone)
}

// Wait returns the init's failure together with the status when the init
// killed the command on purpose.
func TestProcessWaitWithFailure(t *testing.T) {
	s := startSleeper(t)
	p, init := fakeProcess(t, s, false)
	require.NoError(t, send(init, reply{Exited: true, Status: uint32(syscall.SIGKILL),
		Fail: &failure{Layer: "mount", Path: "/w", Msg: "bind: lifted on the host and not restored"}}))
	ex, err := p.Wait()
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, LayerMount, e.Layer)
	assert.Equal(t, "/w", e.Path)
	assert.Equal(t, unix.SIGKILL, ex.Status.Signal())
}

// OSProcess of a sandbox whose init has exited hands out no live handle:
// the pid may name a stranger by then.
func TestProcessOSProcessAfterExit(t *testing.T) {
	s := startSleeper(t)
	p, _ := fakeProcess(t, s, false)
	defer p.release()
	require.NoError(t, s.cmd.Process.Kill())
	pollIn(t, s.pidfd)
	proc := p.OSProcess()
	assert.Equal(t, s.cmd.Process.Pid, proc.Pid)
	assert.Error(t, proc.Signal(syscall.Signal(0)), "released")
}
