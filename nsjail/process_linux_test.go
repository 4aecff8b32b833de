package nsjail

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// sleeper is a process standing in for a sandbox's init.
type sleeper struct {
	cmd   *exec.Cmd
	pidfd int // the test's own handle, to see whether it still runs
}

func startSleeper(t *testing.T) *sleeper {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	require.NoError(t, err)
	s := &sleeper{cmd: cmd, pidfd: fd}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		unix.Close(fd)
	})
	return s
}

func (s *sleeper) alive() bool { return !exited(s.pidfd) }

// fakeProcess is a Process for s with a socket whose other end the test
// reads: what a Kill would tell the init arrives there.
func fakeProcess(t *testing.T, s *sleeper, bare bool) (*Process, *conn) {
	t.Helper()
	ours, theirs, err := socketPair()
	require.NoError(t, err)
	c, err := fileConn(ours)
	require.NoError(t, err)
	peer, err := fileConn(theirs)
	require.NoError(t, err)
	t.Cleanup(func() { peer.Close() })
	fd, err := unix.PidfdOpen(s.cmd.Process.Pid, 0)
	require.NoError(t, err)
	return &Process{conn: c, pid: s.cmd.Process.Pid, pidfd: fd, bare: bare, released: make(chan struct{})}, peer
}

// pending reports whether a message waits on c, without blocking.
func pending(c *conn) bool {
	fds := []unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

func TestProcessKillBeforeRelease(t *testing.T) {
	s := startSleeper(t)
	p, _ := fakeProcess(t, s, false)
	defer p.release()
	require.NoError(t, p.Kill())
	pollIn(t, s.pidfd)
	assert.False(t, s.alive())
}

// Once released, a Process never acts on its old descriptor numbers, even
// when they name another process's pidfd by then.
func TestProcessKillAfterReleaseSparesAReusedPidfd(t *testing.T) {
	s := startSleeper(t)
	p, _ := fakeProcess(t, s, false)
	old := p.pidfd
	p.release()
	stranger := startSleeper(t)
	reused, err := unix.PidfdOpen(stranger.cmd.Process.Pid, 0)
	require.NoError(t, err)
	defer unix.Close(reused)
	if reused != old {
		t.Logf("descriptor %d not reused (got %d): the check still holds", old, reused)
	}
	assert.ErrorIs(t, p.Kill(), os.ErrProcessDone)
	assert.True(t, stranger.alive(), "Kill after release signalled whatever reused the number")
	assert.True(t, s.alive(), "a released Process does not act on its own process either")
}

// A bare sandbox is killed by a message to its init: after release, none
// goes to a socket that reused the number.
func TestProcessBareKillAfterReleaseSendsNothing(t *testing.T) {
	s := startSleeper(t)
	p, _ := fakeProcess(t, s, true)
	p.state = stateRunning
	p.release()
	ours, theirs, err := socketPair()
	require.NoError(t, err)
	c, err := fileConn(ours)
	require.NoError(t, err)
	defer c.Close()
	peer, err := fileConn(theirs)
	require.NoError(t, err)
	defer peer.Close()
	assert.ErrorIs(t, p.Kill(), os.ErrProcessDone)
	assert.False(t, pending(peer), "a kill message reached a stranger's socket")
	assert.False(t, pending(c))
}

func TestProcessBareKillWhileRunningAsksTheInit(t *testing.T) {
	s := startSleeper(t)
	p, peer := fakeProcess(t, s, true)
	defer p.release()
	p.state = stateRunning
	require.NoError(t, p.Kill())
	var ctl control
	_, err := recv(peer, &ctl)
	require.NoError(t, err)
	assert.True(t, ctl.Kill)
	assert.True(t, s.alive(), "the init is asked, not killed")
}

func TestProcessReleaseIsIdempotentAndOSProcessKeepsPid(t *testing.T) {
	s := startSleeper(t)
	p, _ := fakeProcess(t, s, false)
	proc := p.OSProcess()
	assert.Same(t, proc, p.OSProcess())
	assert.Equal(t, s.cmd.Process.Pid, proc.Pid)
	p.release()
	p.release()
	assert.Equal(t, stateReleased, p.state)
	late, _ := fakeProcess(t, s, false)
	late.release()
	lp := late.OSProcess()
	assert.Equal(t, s.cmd.Process.Pid, lp.Pid, "Pid stays readable")
	assert.Error(t, lp.Signal(syscall.Signal(0)), "a handle made after release is released")
}

func TestProcessWaitReportsKillFromOutside(t *testing.T) {
	s := startSleeper(t)
	p, peer := fakeProcess(t, s, false)
	peer.Close() // the init is gone without reporting
	require.NoError(t, s.cmd.Process.Kill())
	ex, err := p.Wait()
	require.NoError(t, err)
	assert.Equal(t, unix.SIGKILL, ex.Status.Signal())
	assert.Nil(t, ex.Rusage)
	assert.ErrorIs(t, p.Kill(), os.ErrProcessDone, "Wait released it")
}

func TestProcessWaitReportsTheInitsStatusAndRusage(t *testing.T) {
	s := startSleeper(t)
	p, peer := fakeProcess(t, s, false)
	ru := &syscall.Rusage{Utime: syscall.Timeval{Sec: 1, Usec: 5}}
	require.NoError(t, send(peer, reply{Exited: true, Status: 3 << 8, Rusage: ru}))
	ex, err := p.Wait()
	require.NoError(t, err)
	assert.Equal(t, 3, ex.Status.ExitStatus())
	require.NotNil(t, ex.Rusage)
	assert.Equal(t, ru.Utime, ex.Rusage.Utime)
}

func pollIn(t *testing.T, fd int) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err != unix.EINTR {
			require.NoError(t, err)
			return
		}
	}
}

// fakeBuilds builds Processes standing in for sandboxes, failing while fail
// is set.
type fakeBuilds struct {
	t     *testing.T
	built chan *Process
	fail  bool
}

func (f *fakeBuilds) build() (*Process, error) {
	if f.fail {
		return nil, errors.New("build failed")
	}
	p, _ := fakeProcess(f.t, startSleeper(f.t), false)
	f.built <- p
	return p, nil
}

func TestPoolKeepsSizeReady(t *testing.T) {
	f := &fakeBuilds{t: t, built: make(chan *Process, 16)}
	p := newPool(2, f.build)
	defer p.close()
	require.NoError(t, p.wait(context.Background()))
	a, b := p.take(), p.take()
	require.NotNil(t, a)
	require.NotNil(t, b)
	assert.NotSame(t, a, b)
	a.release()
	b.release()
	require.NoError(t, p.wait(context.Background()))
	assert.Len(t, p.ready, 2, "each one taken is replaced")
	assert.Len(t, f.built, 4)
}

func TestPoolBuildFailureLeavesItEmpty(t *testing.T) {
	f := &fakeBuilds{t: t, built: make(chan *Process, 4), fail: true}
	p := newPool(1, f.build)
	defer p.close()
	require.NoError(t, p.wait(context.Background()))
	assert.Nil(t, p.take(), "a failed build is dropped: Start builds its own and reports why")
}

func TestPoolCloseKillsWhatIsParked(t *testing.T) {
	f := &fakeBuilds{t: t, built: make(chan *Process, 4)}
	p := newPool(1, f.build)
	require.NoError(t, p.wait(context.Background()))
	parked := <-f.built
	p.close()
	assert.Equal(t, stateReleased, parked.state)
	assert.Nil(t, p.take())
	p.refill()
	require.NoError(t, p.wait(context.Background()))
	assert.Empty(t, f.built, "a refill asked for after close builds nothing")

	// A refill under way at close is killed when it finishes, not parked.
	started, proceed := make(chan struct{}), make(chan struct{})
	q := newPool(1, func() (*Process, error) { close(started); <-proceed; return f.build() })
	<-started
	q.close()
	close(proceed)
	late := <-f.built
	require.NoError(t, waitSettled(q))
	assert.Equal(t, stateReleased, late.state)
	assert.Nil(t, q.take())
}

// Taking a sandbox builds its replacement only once the command is done
// (its sandbox released), so that a short command has the machine to
// itself; or when wait asks for the pool to be full.
func TestPoolRefillsOnceTheCommandIsDone(t *testing.T) {
	f := &fakeBuilds{t: t, built: make(chan *Process, 4)}
	p := newPool(1, f.build)
	defer p.close()
	p.delay = time.Hour
	require.NoError(t, p.wait(context.Background()))
	<-f.built
	taken := p.take()
	require.NotNil(t, taken)
	// Taken as before, the replacement's build would start at once.
	assert.Never(t, func() bool { return len(f.built) > 0 }, 50*time.Millisecond, 5*time.Millisecond,
		"nothing is built while the command runs")
	taken.release()
	<-f.built // the replacement, built once the command is done
	require.NoError(t, waitSettled(p))
	assert.Len(t, p.ready, 1)

	taken = p.take()
	require.NotNil(t, taken)
	defer taken.release()
	require.NoError(t, p.wait(context.Background()), "wait builds it at once")
	assert.Len(t, f.built, 1)
	assert.Len(t, p.ready, 1)
}

// A command that runs on gets its replacement built beside it after a
// while: the pool does not stay short for a long command.
func TestPoolRefillsBesideALongCommand(t *testing.T) {
	f := &fakeBuilds{t: t, built: make(chan *Process, 4)}
	p := newPool(1, f.build)
	defer p.close()
	require.NoError(t, p.wait(context.Background()))
	<-f.built
	p.mu.Lock()
	p.delay = time.Millisecond
	p.mu.Unlock()
	taken := p.take()
	require.NotNil(t, taken)
	defer taken.release()
	<-f.built // built while taken is still running
	require.NoError(t, waitSettled(p))
	assert.Len(t, p.ready, 1)
}

// A deferred refill ends without building when the pool is closed.
func TestPoolCloseEndsDeferredRefills(t *testing.T) {
	f := &fakeBuilds{t: t, built: make(chan *Process, 4)}
	p := newPool(1, f.build)
	p.delay = time.Hour
	require.NoError(t, p.wait(context.Background()))
	<-f.built
	taken := p.take()
	require.NotNil(t, taken)
	defer taken.release()
	p.close()
	require.NoError(t, waitSettled(p))
	assert.Empty(t, f.built)
}

func TestPoolWaitHonoursTheContext(t *testing.T) {
	block := make(chan struct{})
	p := newPool(1, func() (*Process, error) { <-block; return nil, errors.New("never") })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, p.wait(ctx), context.Canceled)
	close(block)
	require.NoError(t, p.wait(context.Background()))
	p.close()
}

// A spawner that died is replaced: the Jail that used it keeps working.
func TestSpawnerDeathHeals(t *testing.T) {
	ws := t.TempDir()
	j, err := New(Options{Workspace: ws})
	require.NoError(t, err)
	defer j.Close()
	run := func() error {
		devNull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		require.NoError(t, err)
		defer devNull.Close()
		p, err := j.Start(&Command{Path: "true", Args: []string{"true"}, Env: []string{"PATH=/usr/bin:/bin"},
			Stdio: [3]*os.File{devNull, devNull, devNull}})
		if err != nil {
			return err
		}
		ex, err := p.Wait()
		if err == nil && ex.Status.ExitStatus() != 0 {
			err = errors.New("command failed")
		}
		return err
	}
	if err := run(); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Layer == LayerNamespaces {
			t.Skip("this host cannot clone sandboxes: " + err.Error())
		}
		require.NoError(t, err)
	}
	for _, waitForNotice := range []bool{true, false} {
		sharedMu.Lock()
		sp := shared[nil]
		sharedMu.Unlock()
		require.NoError(t, unix.Kill(sp.pid, unix.SIGKILL))
		if waitForNotice {
			require.Eventually(t, sp.failed, 10*time.Second, 5*time.Millisecond)
		}
		require.NoError(t, run(), "spawning heals after the spawner died (noticed first: %t)", waitForNotice)
	}
}

func TestCloseInheritedClosesOnlyInheritable(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(name, nil, 0o644))
	leaked, err := unix.Open(name, unix.O_RDONLY, 0)
	require.NoError(t, err)
	kept, err := os.Open(name)
	require.NoError(t, err)
	defer kept.Close()
	closeInherited()
	_, err = unix.FcntlInt(uintptr(leaked), unix.F_GETFD, 0)
	assert.ErrorIs(t, err, unix.EBADF, "a descriptor without close-on-exec is closed")
	_, err = kept.Stat()
	assert.NoError(t, err, "close-on-exec descriptors stay")
}

func TestPoolReapsWhatSatIdleAndRefillsOnNextUse(t *testing.T) {
	f := &fakeBuilds{t: t, built: make(chan *Process, 16)}
	p := newPool(2, f.build)
	defer p.close()
	reaped := make(chan struct{}, 1)
	p.onReap = func() { reaped <- struct{}{} }
	require.NoError(t, p.wait(context.Background()))
	first := []*Process{<-f.built, <-f.built}
	p.reapAfter(time.Millisecond) // the timer fires: an event, not a sleep
	<-reaped
	for _, s := range first {
		assert.Equal(t, stateReleased, s.state, "a sandbox that sat idle is killed")
	}
	assert.Empty(t, p.ready)
	p.reapAfter(0) // no further reaping while the rest is checked
	assert.Nil(t, p.take(), "the first use after reaping builds its own")
	require.NoError(t, p.wait(context.Background()))
	assert.Len(t, p.ready, 2, "and the pool is built again behind it")
	assert.NotNil(t, p.take())
}

func TestPoolReapKillsARefillThatFinishesLater(t *testing.T) {
	started, block := make(chan struct{}), make(chan struct{})
	f := &fakeBuilds{t: t, built: make(chan *Process, 4)}
	p := newPool(1, func() (*Process, error) { close(started); <-block; return f.build() })
	defer p.close()
	<-started
	p.reap()
	close(block)
	late := <-f.built
	require.NoError(t, waitSettled(p))
	assert.Equal(t, stateReleased, late.state)
	assert.Empty(t, p.ready)
}

// waitSettled waits for the builds under way without waking a reaped pool.
func waitSettled(p *pool) error {
	for {
		p.mu.Lock()
		building, settled := p.building, p.settled
		p.mu.Unlock()
		if building == 0 {
			return nil
		}
		<-settled
	}
}

func TestPoolInUseIsNotReaped(t *testing.T) {
	f := &fakeBuilds{t: t, built: make(chan *Process, 16)}
	p := newPool(1, f.build)
	defer p.close()
	require.NoError(t, p.wait(context.Background()))
	p.mu.Lock()
	p.idle = time.Hour
	p.lastUse = time.Now()
	p.timer = time.AfterFunc(time.Hour, func() {})
	p.mu.Unlock()
	p.idleCheck() // early: the last use is recent
	assert.Len(t, p.ready, 1)
	p.mu.Lock()
	assert.False(t, p.reaped)
	p.mu.Unlock()
}
