package nsjail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/testhook"
	"github.com/corralhq/corral/mounts"
)

// Options describe a sandbox. Paths are absolute and canonical.
type Options struct {
	Workspace string
	Writable  []string // besides the workspace
	ReadOnly  []string
	Hidden    []string
	Protected []string // names relative to each writable root
	NetNone   bool
	// Overlays are writable roots (a changeset's: the workspace and any
	// further writable directories it keeps) mounted as overlayfs so that
	// writes land in an upper directory instead.
	Overlays []mounts.OverlayRoot
	// Sources maps writable and read-only paths that are mount
	// destinations, as the sandbox sees them (the workspace among them), to
	// the host paths bound there. Needs a mount namespace.
	Sources map[string]string
	// Layered are directories mounted as overlayfs whose writes land in
	// an upper directory, such as a persistent home (see mounts.Input).
	Layered []mounts.OverlayRoot
	// Tmp, when set, is bound at /tmp instead of a private tmpfs.
	Tmp string
	// Direct clones sandboxes from the calling process instead of a spawner.
	// It saves starting the spawner and suits small, short-lived callers
	// such as the CLI; a caller with a large heap pays a full fork per spawn.
	// Only the first sandbox is built ahead (when Ahead > 0), from New on.
	Direct bool
	// Ahead is how many sandboxes to keep built ahead of time, waiting for
	// a command (ignored with overlays, which keep none).
	Ahead int
	// Landlock, when set, is enforced on every command.
	Landlock *Landlock
	// Seccomp is a filter compiled by the seccomp package, loaded on every
	// command; nil loads none.
	Seccomp []byte
	// Bare runs commands without namespaces: no mount tree, no private
	// /tmp or /proc, the host's PIDs and network. Landlock is then the
	// wall and is required; each sandbox gets a temp dir under TempBase as
	// TMPDIR.
	Bare     bool
	TempBase string
}

// Landlock says which of Landlock's features the sandbox uses. The rules
// themselves are computed by the init from the sandbox's paths.
type Landlock struct {
	ABI int
	// Scope confines abstract unix sockets and signals to the sandbox.
	Scope bool
	// DenyTCP refuses TCP bind and connect, for Network=none without a
	// network namespace.
	DenyTCP bool
}

// Jail starts commands in sandboxes built from one Options.
type Jail struct {
	setup    setup
	cloner   cloner
	netNone  bool
	pool     *pool
	first    *first // a direct caller's first sandbox, built from New on
	bare     bool
	tempBase string
}

// cloner produces fresh inits: a connection to one and its host pid.
type cloner interface {
	clone(netNone bool) (*conn, int, error)
}

// New prepares a Jail. The mount plan is computed here, once.
func New(o Options) (*Jail, error) {
	if o.Bare && o.Landlock == nil {
		return nil, &Error{Layer: LayerLandlock, Err: errors.New("required without namespaces")}
	}
	if o.Bare && len(o.Overlays) > 0 {
		return nil, &Error{Layer: LayerOverlay, Err: errors.New("needs a mount namespace")}
	}
	if o.Bare && (len(o.Layered) > 0 || o.Tmp != "") {
		return nil, &Error{Layer: LayerOverlay, Err: errors.New("a persistent home or /tmp needs a mount namespace")}
	}
	if o.Bare && len(o.Sources) > 0 {
		return nil, &Error{Layer: LayerMount, Err: errors.New("mount destinations need a mount namespace")}
	}
	in := o.Input()
	j := &Jail{setup: setup{
		Plan: mounts.Build(in), Paths: in, NetNone: o.NetNone, Workspace: o.Workspace,
		Landlock: o.Landlock, Seccomp: o.Seccomp, Bare: o.Bare,
		NoGuard: testhook.Disabled(testhook.Guard),
	}, netNone: o.NetNone, bare: o.Bare, tempBase: o.TempBase}
	switch {
	case o.Bare:
		j.cloner = bareCloner{} // no namespace flags: a cheap vfork from any heap
	case o.Direct:
		j.cloner = directCloner{}
	default:
		j.cloner = spawnerCloner{}
	}
	ahead := o.Ahead
	// An overlay may be mounted only while its command runs: a sandbox
	// built ahead would hold it beside the running one, and across an apply
	// that changes the layers under it.
	if len(o.Overlays) > 0 || len(o.Layered) > 0 {
		ahead = 0
	}
	// A direct caller is short-lived: only its first sandbox is built ahead.
	if o.Direct {
		if ahead > 0 {
			j.first = startFirst(j.build)
		}
		ahead = 0
	}
	j.pool = newPool(ahead, j.build)
	return j, nil
}

// Ready blocks until the sandboxes kept built ahead are ready, so that the
// next Start takes one.
func (j *Jail) Ready(ctx context.Context) error {
	if j.first != nil {
		if err := j.first.wait(ctx); err != nil {
			return err
		}
	}
	return j.pool.wait(ctx)
}

// Close kills the sandboxes kept ready. Running commands are not affected.
func (j *Jail) Close() error {
	if j.first != nil {
		j.first.close()
	}
	j.pool.close()
	return nil
}

// Plan returns the mount plan every sandbox of j is built from.
func (j *Jail) Plan() *mounts.Plan { return j.setup.Plan }

// Command is a command to start in a sandbox.
type Command struct {
	Path  string
	Args  []string
	Env   []string
	Dir   string
	Stdio [3]*os.File
	// ExtraFiles are placed at descriptors 3 and up in the command; no
	// other descriptor of the caller reaches it.
	ExtraFiles []*os.File
}

// Start starts c in a sandbox: one built ahead of time when there is one
// ready, a new one otherwise.
func (j *Jail) Start(c *Command) (*Process, error) {
	if p := j.takeBuilt(); p != nil && !discardMoved(p) {
		err := p.exec(c)
		if err == nil {
			return p, nil
		}
		p.Kill()
		p.release()
		var e *Error
		if !errors.As(err, &e) || e.Layer != LayerInit && e.Layer != LayerStale {
			return nil, err // the init's own answer: a fresh one would say the same
		}
		// The ready sandbox stopped answering (killed while it waited), or
		// the host replaced a path it had mounted: the command deserves a
		// fresh one rather than that error.
	}
	return j.startFresh(c)
}

// startFresh builds a sandbox for c and starts it there. A host changing a
// mounted path between the build and the start makes it build once more.
func (j *Jail) startFresh(c *Command) (*Process, error) {
	for try := 0; ; try++ {
		p, err := j.build()
		if err != nil {
			return nil, err
		}
		err = p.exec(c)
		if err == nil {
			return p, nil
		}
		p.Kill()
		p.release()
		var e *Error
		if try > 0 || !errors.As(err, &e) || e.Layer != LayerStale {
			return nil, err
		}
	}
}

// takeBuilt returns a sandbox built ahead, or nil: a direct caller's first
// one, waiting for it to be built, else one from the pool that is ready.
func (j *Jail) takeBuilt() *Process {
	if j.first != nil {
		if p := j.first.take(); p != nil {
			return p
		}
	}
	return j.pool.take()
}

// build clones an init and has it build the sandbox, up to the point where
// it waits for a command.
func (j *Jail) build() (*Process, error) {
	s := j.setup
	if j.bare {
		dir, err := os.MkdirTemp(j.tempBase, "corral-")
		if err != nil {
			return nil, &Error{Layer: LayerTmp, Path: j.tempBase, Err: err}
		}
		s.TmpDir = dir
	}
	conn, pid, err := j.cloner.clone(j.netNone)
	if err != nil {
		removeTmp(s.TmpDir)
		return nil, &Error{Layer: LayerNamespaces, Err: err}
	}
	exit := takeInitExit(pid)
	// Open the handle before the first round trip: the init answering
	// afterwards proves the pid still named it.
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		conn.Close()
		forgetInitExit(pid, exit)
		removeTmp(s.TmpDir)
		return nil, &Error{Layer: LayerInit, Err: os.NewSyscallError("pidfd_open", err)}
	}
	p := &Process{conn: conn, pid: pid, pidfd: pidfd, bare: j.bare, tmpDir: s.TmpDir, exit: exit}
	if err := p.call(&s, nil, func(r *reply) bool { p.sources = r.Sources; return r.Ready }); err != nil {
		p.Kill()
		p.release()
		return nil, err
	}
	return p, nil
}

// Process is a sandbox: built, then running a command, then released.
//
// Its descriptors (the init's socket and pidfd) are closed exactly once, by
// release, under mu; Kill takes mu too and does nothing once they are
// closed, so a Kill racing with Wait never acts on a descriptor number the
// process may by then have reused for something else.
type Process struct {
	conn    *conn
	pid     int
	pidfd   int
	bare    bool
	tmpDir  string
	exit    chan syscall.WaitStatus // the init's own status, once reaped
	sources []source                // what its binds showed when built

	mu      sync.Mutex
	state   procState
	osProc  *os.Process
	dropped []string // what the init did not merge back, with its exit
}

// procState is where a Process is in its life.
type procState int

const (
	stateBuilt    procState = iota // waiting for a command
	stateRunning                   // its command started
	stateReleased                  // its descriptors closed: nothing may use them
)

// exec starts c in the built sandbox.
func (p *Process) exec(c *Command) error {
	req := &execReq{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir, Extra: len(c.ExtraFiles)}
	files := append(c.Stdio[:len(c.Stdio):len(c.Stdio)], c.ExtraFiles...)
	if len(files) > maxFiles {
		return &Error{Layer: LayerExec, Err: fmt.Errorf("%d extra files: at most %d", len(c.ExtraFiles), maxFiles-3)}
	}
	err := p.call(req, files, func(r *reply) bool { return r.Started })
	if err == nil {
		p.mu.Lock()
		if p.state == stateBuilt {
			p.state = stateRunning
		}
		p.mu.Unlock()
	}
	return err
}

// call sends msg and waits for the reply that ok accepts.
func (p *Process) call(msg any, files []*os.File, ok func(*reply) bool) error {
	if err := send(p.conn, msg, files...); err != nil {
		return &Error{Layer: LayerInit, Err: err}
	}
	var r reply
	if _, err := recv(p.conn, &r); err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("sandbox init exited during setup")
		}
		return &Error{Layer: LayerInit, Err: err}
	}
	if r.Fail != nil {
		return r.Fail.err()
	}
	if !ok(&r) {
		return &Error{Layer: LayerInit, Err: fmt.Errorf("unexpected reply %+v", r)}
	}
	return nil
}

// Pid is the host pid of the sandbox's init.
func (p *Process) Pid() int { return p.pid }

// OSProcess is the init as an os.Process, for Cmd.Process. It is opened on
// first use and checked against the pidfd opened before the init first
// answered: while that pidfd shows the init alive, the pid still names it.
// Its handle is the caller's to release.
func (p *Process) OSProcess() *os.Process {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.osProc != nil {
		return p.osProc
	}
	proc, err := os.FindProcess(p.pid)
	if err != nil { // cannot happen on Unix
		proc = &os.Process{Pid: p.pid}
	}
	if p.state == stateReleased || exited(p.pidfd) {
		// The pid may name a stranger by now: hand out no handle to it.
		releaseKeepPid(proc)
	}
	p.osProc = proc
	return proc
}

// releaseKeepPid releases proc's handle but leaves its Pid readable, as
// os/exec leaves Cmd.Process.Pid after Wait.
func releaseKeepPid(proc *os.Process) {
	pid := proc.Pid
	proc.Release()
	proc.Pid = pid
}

// exited reports whether the process behind pidfd has exited.
func exited(pidfd int) bool {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// Dropped returns, after Wait, what the command wrote under protected names
// that was not merged back into the host or was moved aside, one line each.
func (p *Process) Dropped() []string { return p.dropped }

// Kill ends the sandbox. Once the command runs, its init is asked to kill
// every other process (a bare sandbox has no PID namespace to take them
// along), and then finishes as after any command: what the command wrote
// under protected names is merged or held before Wait returns. The init is
// killed itself, which kills everything inside, only when it cannot be
// asked. After release, Kill does nothing and returns os.ErrProcessDone.
func (p *Process) Kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case stateReleased:
		return os.ErrProcessDone
	case stateRunning:
		if send(p.conn, control{Kill: true}) == nil {
			return nil
		}
	}
	err := unix.PidfdSendSignal(p.pidfd, unix.SIGKILL, nil, 0)
	if err == unix.ESRCH {
		return os.ErrProcessDone
	}
	return err
}

// Exit is how a command ended.
type Exit struct {
	Status syscall.WaitStatus
	// Rusage is the command's resource usage as its init measured it, or
	// nil when the sandbox was killed from outside before it could report.
	Rusage *syscall.Rusage
}

// Wait returns how the command ended once it and everything it started
// are gone, then releases the sandbox. A sandbox killed from outside
// reports SIGKILL; an init that failed otherwise before reporting the
// command's status is an error of layer "init", never the command's
// status. A failure that comes with the report says the init killed the
// command on purpose (a protection it could not keep).
func (p *Process) Wait() (Exit, error) {
	defer p.release()
	var r reply
	if _, err := recv(p.conn, &r); err == nil && r.Exited {
		// The init killed and reaped everything else before reporting.
		p.dropped = r.Dropped
		ex := Exit{Status: syscall.WaitStatus(r.Status), Rusage: r.Rusage}
		if r.Fail != nil {
			return ex, r.Fail.err()
		}
		return ex, nil
	}
	// The init died without reporting (killed from outside): its pidfd
	// turns readable only once the kernel has killed and reaped everything
	// else in its PID namespace.
	if err := waitReadable(p.pidfd); err != nil {
		return Exit{}, err
	}
	// Without a channel nobody reaps the init for us (it is not our child):
	// all that is known is that it is gone, as if killed from outside.
	if p.exit == nil {
		return Exit{Status: syscall.WaitStatus(unix.SIGKILL)}, nil
	}
	if ws := <-p.exit; !ws.Signaled() || ws.Signal() != unix.SIGKILL {
		return Exit{}, &Error{Layer: LayerInit, Err: fmt.Errorf("died while the command ran (%s); the command was killed with it", describeStatus(ws))}
	}
	return Exit{Status: syscall.WaitStatus(unix.SIGKILL)}, nil
}

func describeStatus(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + unix.SignalName(ws.Signal())
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}

// release closes the sandbox's descriptors, once. Kill and OSProcess hold
// mu too, so none of them ever uses a closed (and maybe reused) number.
func (p *Process) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == stateReleased {
		return
	}
	p.state = stateReleased
	p.conn.Close()
	unix.Close(p.pidfd)
	forgetInitExit(p.pid, p.exit)
	removeTmp(p.tmpDir)
}

// removeTmp removes a bare sandbox's temp dir. The command cannot have
// swapped it for a link: it may not change the directory that holds it.
func removeTmp(dir string) {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

func waitReadable(fd int) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err != unix.EINTR {
			return os.NewSyscallError("poll pidfd", err)
		}
	}
}

// Input is what the sandbox's mount tree and Landlock rules are built from:
// the workspace first among the writable roots.
func (o Options) Input() mounts.Input {
	return mounts.Input{
		Writable:  append([]string{o.Workspace}, o.Writable...),
		ReadOnly:  o.ReadOnly,
		Hidden:    o.Hidden,
		Protected: o.Protected,
		Overlays:  o.Overlays,
		Sources:   o.Sources,
		Layered:   o.Layered,
		Tmp:       o.Tmp,
	}
}
