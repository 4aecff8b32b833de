package nsjail

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// newJail makes a Jail over a fresh workspace, skipping the test on a host
// that cannot clone sandboxes at all.
func newJail(t *testing.T, o Options) *Jail {
	t.Helper()
	requireClone(t)
	if o.Workspace == "" {
		o.Workspace = t.TempDir()
	}
	j, err := New(o)
	require.NoError(t, err)
	t.Cleanup(func() {
		// No refill outlives the test to reach the next one's spawner.
		j.Ready(context.Background())
		j.Close()
	})
	return j
}

var cloneOnce struct {
	sync.Once
	err error
}

// requireClone skips the test when this host cannot build a sandbox (no
// unprivileged user namespaces): the one thing that may be missing.
func requireClone(t *testing.T) {
	t.Helper()
	cloneOnce.Do(func() {
		j, err := New(Options{Workspace: t.TempDir(), Direct: true})
		if err != nil {
			cloneOnce.err = err
			return
		}
		defer j.Close()
		p, err := j.build()
		if err == nil {
			p.Kill()
			p.release()
		}
		cloneOnce.err = err
	})
	var e *Error
	if errors.As(cloneOnce.err, &e) && e.Layer == "namespaces" {
		t.Skip("this host cannot clone sandboxes: " + cloneOnce.err.Error())
	}
	require.NoError(t, cloneOnce.err)
}

// run starts argv in j and returns its output once it exited 0.
func run(t *testing.T, j *Jail, argv ...string) (*Process, string) {
	t.Helper()
	p, out, err := start(t, j, argv...)
	require.NoError(t, err)
	ex, err := p.Wait()
	require.NoError(t, err)
	b, err := io.ReadAll(out)
	require.NoError(t, err)
	require.Equal(t, 0, ex.Status.ExitStatus(), "%s", b)
	return p, string(b)
}

func start(t *testing.T, j *Jail, argv ...string) (*Process, io.Reader, error) {
	t.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	require.NoError(t, err)
	defer null.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer w.Close()
	t.Cleanup(func() { r.Close() })
	p, err := j.Start(&Command{Path: argv[0], Args: argv, Env: []string{"PATH=/usr/bin:/bin"},
		Stdio: [3]*os.File{null, w, w}})
	return p, r, err
}

// parked returns the sandboxes waiting in j's pool, leaving them there.
func parked(j *Jail) []*Process {
	var out []*Process
	for range len(j.pool.ready) {
		p := <-j.pool.ready
		out = append(out, p)
		j.pool.ready <- p
	}
	return out
}

// handle opens the test's own pidfd on pid, to see it exit.
func handle(t *testing.T, pid int) int {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func TestJailTakesAReadySandboxAndRefills(t *testing.T) {
	j := newJail(t, Options{Ahead: 1})
	require.NoError(t, j.Ready(t.Context()))
	ready := parked(j)
	require.Len(t, ready, 1)
	p, out := run(t, j, "echo", "hi")
	assert.Equal(t, "hi\n", out)
	assert.Equal(t, ready[0].Pid(), p.Pid(), "the command ran in the sandbox built ahead")
	require.NoError(t, j.Ready(t.Context()))
	refill := parked(j)
	require.Len(t, refill, 1, "taking one builds its replacement")
	assert.NotEqual(t, p.Pid(), refill[0].Pid())
}

// A sandbox that died while it waited (killed, out of memory) is replaced
// by a fresh one: the command never sees its failure.
func TestJailReplacesAReadySandboxThatDied(t *testing.T) {
	j := newJail(t, Options{Ahead: 1})
	require.NoError(t, j.Ready(t.Context()))
	dead := parked(j)[0]
	fd := handle(t, dead.Pid())
	require.NoError(t, unix.Kill(dead.Pid(), unix.SIGKILL))
	pollIn(t, fd)
	p, out := run(t, j, "echo", "fresh")
	assert.Equal(t, "fresh\n", out)
	assert.NotEqual(t, dead.Pid(), p.Pid())
	assert.Equal(t, stateReleased, dead.state, "the dead one is released")
}

// A sandbox built ahead binds what its paths named then: when the host
// replaces one of them meanwhile, the command gets a fresh sandbox that
// shows the new one.
func TestJailDiscardsAStaleSandbox(t *testing.T) {
	base := t.TempDir()
	ws, ro := filepath.Join(base, "ws"), filepath.Join(base, "ro")
	for _, d := range []string{ws, ro} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ro, "v"), []byte("old\n"), 0o644))
	j := newJail(t, Options{Workspace: ws, ReadOnly: []string{ro}, Ahead: 1})
	require.NoError(t, j.Ready(t.Context()))
	stale := parked(j)[0]
	require.NoError(t, os.Rename(ro, ro+".old"))
	require.NoError(t, os.Mkdir(ro, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ro, "v"), []byte("new\n"), 0o644))
	p, out := run(t, j, "cat", filepath.Join(ro, "v"))
	assert.Equal(t, "new\n", out)
	assert.NotEqual(t, stale.Pid(), p.Pid())
	assert.Equal(t, stateReleased, stale.state)
}

func TestJailCloseKillsReadySandboxes(t *testing.T) {
	j := newJail(t, Options{Ahead: 2})
	require.NoError(t, j.Ready(t.Context()))
	ready := parked(j)
	require.Len(t, ready, 2)
	var fds []int
	for _, p := range ready {
		fds = append(fds, handle(t, p.Pid()))
	}
	require.NoError(t, j.Close())
	for i, fd := range fds {
		pollIn(t, fd) // returns once the init is gone
		assert.Equal(t, stateReleased, ready[i].state)
	}
	assert.Nil(t, j.pool.take())
}

// A direct caller builds its first sandbox from New on, and only that one.
func TestJailDirectBuildsOnlyTheFirstAhead(t *testing.T) {
	j := newJail(t, Options{Direct: true, Ahead: 3})
	require.NotNil(t, j.first)
	assert.Zero(t, cap(j.pool.ready), "nothing else is kept ahead")
	require.NoError(t, j.Ready(t.Context()))
	first := j.first.p
	require.NotNil(t, first)
	p, _ := run(t, j, "true")
	assert.Equal(t, first.Pid(), p.Pid())
	p, _ = run(t, j, "true")
	assert.NotEqual(t, first.Pid(), p.Pid(), "the second command builds its own")
}

func TestJailDirectCloseKillsAnUntakenFirst(t *testing.T) {
	j := newJail(t, Options{Direct: true, Ahead: 1})
	require.NoError(t, j.Ready(t.Context()))
	fd := handle(t, j.first.p.Pid())
	require.NoError(t, j.Close())
	pollIn(t, fd)
	_, _, err := start(t, j, "true")
	assert.NoError(t, err, "a closed Jail still starts commands in fresh sandboxes")
}

// The init's own failure is the command's answer: a fresh sandbox would
// say the same, so none is built.
func TestJailReportsTheInitsAnswer(t *testing.T) {
	j := newJail(t, Options{Ahead: 1})
	require.NoError(t, j.Ready(t.Context()))
	_, _, err := start(t, j, "no-such-command-anywhere")
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, LayerExec, e.Layer)
	assert.Equal(t, "no-such-command-anywhere", e.Path)
}

func TestFirstTakeOnce(t *testing.T) {
	f := &fakeBuilds{t: t, built: make(chan *Process, 1)}
	first := startFirst(f.build)
	require.NoError(t, first.wait(t.Context()))
	p := first.take()
	require.NotNil(t, p)
	defer p.release()
	assert.Nil(t, first.take(), "only the first caller gets it")
	first.close()
	assert.Equal(t, stateBuilt, p.state, "closing leaves the taken one alone")
}

func TestFirstBuildFailure(t *testing.T) {
	f := &fakeBuilds{t: t, fail: true}
	first := startFirst(f.build)
	assert.Nil(t, first.take(), "the command builds its own and reports why")
	first.close()
}

// Closing before the build finished kills the sandbox once it is built,
// without waiting for that.
func TestFirstCloseDuringBuild(t *testing.T) {
	proceed := make(chan struct{})
	f := &fakeBuilds{t: t, built: make(chan *Process, 1)}
	first := startFirst(func() (*Process, error) { <-proceed; return f.build() })
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, first.wait(ctx), context.Canceled)
	first.close() // returns at once
	close(proceed)
	p := <-f.built
	pollIn(t, handle(t, p.Pid())) // returns once close killed it
	assert.Nil(t, first.take(), "closed")
}

// A refill that finds the pool full kills what it built instead of
// leaking it.
func TestPoolRefillWhenFull(t *testing.T) {
	f := &fakeBuilds{t: t, built: make(chan *Process, 4)}
	p := newPool(1, f.build)
	defer p.close()
	require.NoError(t, p.wait(t.Context()))
	p.refill()
	require.NoError(t, p.wait(t.Context()))
	first, extra := <-f.built, <-f.built
	assert.Equal(t, stateBuilt, first.state)
	assert.Equal(t, stateReleased, extra.state)
	assert.Len(t, p.ready, 1)
}

// A spawner killed while a request waits for its answer fails that request
// over to a fresh spawner: the caller gets its sandbox.
func TestSpawnerDiesMidRequest(t *testing.T) {
	requireClone(t)
	sp := sharedSpawner(nil)
	require.NoError(t, sp.err)
	spfd := handle(t, sp.pid)
	// Whatever happens, the stopped spawner does not stay to hang the
	// tests after this one: killed, it is replaced.
	t.Cleanup(func() { unix.PidfdSendSignal(spfd, unix.SIGKILL, nil, 0) })
	sp.mu.Lock()
	before := sp.nextID
	sp.mu.Unlock()
	require.NoError(t, unix.PidfdSendSignal(spfd, unix.SIGSTOP, nil, 0))
	type result struct {
		c   *conn
		pid int
		err error
	}
	done := make(chan result)
	go func() {
		c, pid, err := spawnerCloner{}.clone(false)
		done <- result{c, pid, err}
	}()
	// The request is sent on the goroutine above; nothing signals that it
	// is waiting for an answer but the pending table.
	require.Eventually(t, func() bool {
		sp.mu.Lock()
		defer sp.mu.Unlock()
		for id := range sp.pending {
			if id > before {
				return true
			}
		}
		return false
	}, time.Minute, time.Millisecond)
	require.NoError(t, unix.PidfdSendSignal(spfd, unix.SIGKILL, nil, 0))
	r := <-done
	require.NoError(t, r.err, "the request is retried on a fresh spawner")
	defer r.c.Close()
	assert.True(t, sp.failed())
	sharedMu.Lock()
	assert.NotSame(t, sp, shared[nil], "a fresh spawner took its place")
	sharedMu.Unlock()
	fd := handle(t, r.pid)
	r.c.Close()
	pollIn(t, fd) // the init ends when its caller's end closes
}

// The caller's side of a spawner that answers wrongly: each answer fails
// its own request with the spawner's reason, and an unreadable one fails
// the spawner and every request still waiting.
func TestSpawnerBadAnswers(t *testing.T) {
	ours, peer := connPair(t)
	s := &spawner{conn: ours, pending: map[uint64]chan spawnResult{}}
	go s.readLoop()
	clone := func() <-chan error {
		done := make(chan error, 1)
		go func() {
			c, _, err := s.clone(spawnReq{})
			if c != nil {
				c.Close()
			}
			done <- err
		}()
		return done
	}
	request := func() spawnReq {
		var req spawnReq
		_, err := recv(peer, &req)
		require.NoError(t, err)
		return req
	}

	done := clone()
	req := request()
	require.NoError(t, send(peer, spawnResp{ID: req.ID, Err: "clone: operation not permitted"}))
	assert.EqualError(t, <-done, "clone: operation not permitted")

	done = clone()
	req = request()
	require.NoError(t, send(peer, spawnResp{ID: req.ID, Pid: 1}))
	assert.EqualError(t, <-done, "spawner sent no socket")

	// Two sockets for one request are refused too, and both are closed.
	done = clone()
	req = request()
	r1, w1 := attachedPipe(t)
	r2, w2 := attachedPipe(t)
	require.NoError(t, send(peer, spawnResp{ID: req.ID, Pid: 1}, w1, w2))
	w1.Close()
	w2.Close()
	assert.EqualError(t, <-done, "spawner sent no socket")
	assert.True(t, receivedClosed(t, r1))
	assert.True(t, receivedClosed(t, r2))

	// The status of an init nobody waits for, and an answer to no request,
	// are ignored.
	status := uint32(0)
	require.NoError(t, send(peer, spawnResp{Pid: 1 << 30, Exited: &status}))
	require.NoError(t, send(peer, spawnResp{ID: 1 << 40, Err: "late"}))

	done = clone()
	request()
	sendRaw(t, peer, []byte("garbage"))
	assert.ErrorIs(t, <-done, errClosed, "a request waiting when the spawner fails is answered")
	assert.True(t, s.failed())
	assert.ErrorIs(t, <-clone(), errClosed, "a failed spawner takes no more requests")
}

// A spawner whose socket is gone fails a request at once.
func TestSpawnerSendFails(t *testing.T) {
	ours, peer := connPair(t)
	peer.Close()
	s := &spawner{conn: ours, pending: map[uint64]chan spawnResult{}}
	_, _, err := s.clone(spawnReq{})
	assert.ErrorIs(t, err, errClosed)
	assert.True(t, s.failed())
}

// The spawner returns when its caller closes the socket, and its inits
// report their exits through it until then.
func TestSpawnerExitsWhenItsCallerCloses(t *testing.T) {
	requireClone(t)
	sp := &spawner{pending: map[uint64]chan spawnResult{}}
	require.NoError(t, sp.startProcess())
	fd := handle(t, sp.pid)
	c, pid, err := sp.clone(spawnReq{})
	require.NoError(t, err)
	exit := takeInitExit(pid)
	defer forgetInitExit(pid, exit)
	c.Close() // the init's lifeline: it exits
	ws := <-exit
	assert.True(t, ws.Exited(), "%v", ws)
	assert.Equal(t, 125, ws.ExitStatus(), "an init whose caller left before the setup")
	sp.conn.Close()
	pollIn(t, fd) // returns once the spawner is gone
}

// The init started by hand (no socket at fd 3, or a socket that says
// something else) refuses with one line and a status, never a
// panic.
func TestEntrypointsStartedByHand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		socket func(t *testing.T) *os.File
		status int
		msg    string
	}{
		{initName, nil, 125, "corral: __sandbox-init is started by corral itself, not by hand\n"},
		{initName, func(t *testing.T) *os.File {
			ours, theirs, err := socketPair()
			require.NoError(t, err)
			c, err := fileConn(ours)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			sendRaw(t, c, []byte(`{"Plan": "not a plan"}`))
			return theirs
		}, 125, "corral: __sandbox-init is started by corral itself, not by hand\n"},
		// A caller that went away before the setup is no news.
		{initName, func(t *testing.T) *os.File {
			ours, theirs, err := socketPair()
			require.NoError(t, err)
			ours.Close()
			return theirs
		}, 125, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tc.name)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if tc.socket != nil {
				s := tc.socket(t)
				defer s.Close()
				cmd.ExtraFiles = []*os.File{s}
			}
			err := cmd.Run()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tc.status, ee.ExitCode())
			assert.Equal(t, tc.msg, stderr.String())
			assert.False(t, strings.Contains(stderr.String(), "goroutine"), "no stack trace")
		})
	}
}

// An init killed from outside while its command runs reports SIGKILL; one
// that dies otherwise is an error of layer "init", never the command's
// status.
func TestProcessWaitInitDiedOtherwise(t *testing.T) {
	s := startSleeper(t)
	p, peer := fakeProcess(t, s, false)
	p.exit = make(chan syscall.WaitStatus, 1)
	peer.Close()
	p.exit <- syscall.WaitStatus(3 << 8) // exit status 3
	require.NoError(t, s.cmd.Process.Kill())
	ex, err := p.Wait()
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, LayerInit, e.Layer)
	assert.Contains(t, err.Error(), "died while the command ran (exit status 3)")
	assert.Zero(t, ex.Status)

	s = startSleeper(t)
	p, peer = fakeProcess(t, s, false)
	p.exit = make(chan syscall.WaitStatus, 1)
	peer.Close()
	p.exit <- syscall.WaitStatus(unix.SIGKILL)
	require.NoError(t, s.cmd.Process.Kill())
	ex, err = p.Wait()
	require.NoError(t, err)
	assert.Equal(t, unix.SIGKILL, ex.Status.Signal())
}

func TestJailReapsIdleSandboxesAndBuildsAgain(t *testing.T) {
	j := newJail(t, Options{Ahead: 2})
	require.NoError(t, j.Ready(context.Background()))
	idle := parked(j)
	require.Len(t, idle, 2)
	j.pool.reap() // what the idle timer does
	for _, p := range idle {
		assert.Equal(t, stateReleased, p.state)
	}
	assert.Empty(t, parked(j))
	_, out := run(t, j, "/bin/echo", "after")
	assert.Equal(t, "after\n", out, "the first command after reaping gets a fresh sandbox")
	require.NoError(t, j.Ready(context.Background()))
	assert.Len(t, parked(j), 2)
}
