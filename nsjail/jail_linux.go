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
		return nil, &Error{Layer: "landlock", Err: errors.New("required without namespaces")}
	}
	if o.Bare && len(o.Overlays) > 0 {
		return nil, &Error{Layer: "overlay", Err: errors.New("needs a mount namespace")}
	}
	in := mounts.Input{
		Writable:  append([]string{o.Workspace}, o.Writable...),
		ReadOnly:  o.ReadOnly,
		Hidden:    o.Hidden,
		Protected: o.Protected,
		Overlays:  o.Overlays,
	}
	j := &Jail{setup: setup{
		Plan: mounts.Build(in), Paths: in, NetNone: o.NetNone, Workspace: o.Workspace,
		Landlock: o.Landlock, Seccomp: o.Seccomp, Bare: o.Bare,
	}, netNone: o.NetNone, bare: o.Bare, tempBase: o.TempBase}
	switch {
	case o.Bare:
		j.cloner = bareCloner{} // no namespace flags: a cheap vfork from any heap
	case o.Direct:
		j.cloner = directCloner{}
	default:
		j.cloner = sharedSpawner()
	}
	ahead := o.Ahead
	// An overlay may be mounted only while its command runs: a sandbox
	// built ahead would hold it beside the running one, and across an apply
	// that changes the layers under it.
	if len(o.Overlays) > 0 {
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
}

// Start starts c in a sandbox: one built ahead of time when there is one
// ready, a new one otherwise.
func (j *Jail) Start(c *Command) (*Process, error) {
	if p := j.takeBuilt(); p != nil {
		err := p.exec(c)
		if err == nil {
			return p, nil
		}
		p.Kill()
		p.release()
		var e *Error
		if !errors.As(err, &e) || e.Layer != "init" {
			return nil, err // the init's own answer: a fresh one would say the same
		}
		// The ready sandbox stopped answering (killed while it waited): the
		// command deserves a fresh one rather than that error.
	}
	p, err := j.build()
	if err != nil {
		return nil, err
	}
	if err := p.exec(c); err != nil {
		p.Kill()
		p.release()
		return nil, err
	}
	return p, nil
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
			return nil, &Error{Layer: "tmp", Path: j.tempBase, Err: err}
		}
		s.TmpDir = dir
	}
	conn, pid, err := j.cloner.clone(j.netNone)
	if err != nil {
		removeTmp(s.TmpDir)
		return nil, &Error{Layer: "namespaces", Err: err}
	}
	// Open the handle before the first round trip: the init answering
	// afterwards proves the pid still named it.
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		conn.Close()
		removeTmp(s.TmpDir)
		return nil, &Error{Layer: "init", Err: os.NewSyscallError("pidfd_open", err)}
	}
	// The caller's handle (os.Process, for Cmd.Process) is opened before
	// the round trip too, for the same reason.
	proc, err := os.FindProcess(pid)
	if err != nil {
		unix.Close(pidfd)
		conn.Close()
		removeTmp(s.TmpDir)
		return nil, &Error{Layer: "init", Err: err}
	}
	p := &Process{conn: conn, pid: pid, pidfd: pidfd, proc: proc, bare: j.bare, tmpDir: s.TmpDir}
	if err := p.call(&s, nil, func(r *reply) bool { return r.Ready }); err != nil {
		p.Kill()
		p.release()
		return nil, err
	}
	return p, nil
}

// Process is a running sandbox.
type Process struct {
	conn    *conn
	pid     int
	pidfd   int
	proc    *os.Process
	once    sync.Once
	bare    bool
	tmpDir  string
	started bool
	dropped []string
}

// exec starts c in the built sandbox.
func (p *Process) exec(c *Command) error {
	req := &execReq{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir}
	err := p.call(req, c.Stdio[:], func(r *reply) bool { return r.Started })
	p.started = err == nil
	return err
}

// call sends msg and waits for the reply that ok accepts.
func (p *Process) call(msg any, files []*os.File, ok func(*reply) bool) error {
	if err := send(p.conn, msg, files...); err != nil {
		return &Error{Layer: "init", Err: err}
	}
	var r reply
	if _, err := recv(p.conn, &r); err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("sandbox init exited during setup")
		}
		return &Error{Layer: "init", Err: err}
	}
	if r.Fail != nil {
		return r.Fail.err()
	}
	if !ok(&r) {
		return &Error{Layer: "init", Err: fmt.Errorf("unexpected reply %+v", r)}
	}
	return nil
}

// Pid is the host pid of the sandbox's init.
func (p *Process) Pid() int { return p.pid }

// OSProcess is the init as an os.Process, opened before the init first
// answered, so it cannot name a stranger that reused the pid.
func (p *Process) OSProcess() *os.Process { return p.proc }

// Dropped returns, after Wait, what the command wrote under protected names
// that was not merged back into the host or was moved aside, one line each.
func (p *Process) Dropped() []string { return p.dropped }

// Kill ends the sandbox. Once the command runs, its init is asked to kill
// every other process (a bare sandbox has no PID namespace to take them
// along), and then finishes as after any command: what the command wrote
// under protected names is merged or held before Wait returns. The init is
// killed itself, which kills everything inside, only when it cannot be
// asked.
func (p *Process) Kill() error {
	if p.started && send(p.conn, control{Kill: true}) == nil {
		return nil
	}
	err := unix.PidfdSendSignal(p.pidfd, unix.SIGKILL, nil, 0)
	if err == unix.ESRCH {
		return os.ErrProcessDone
	}
	return err
}

// Wait returns the command's status once it and everything it started are
// gone. A sandbox killed from outside reports SIGKILL.
func (p *Process) Wait() (syscall.WaitStatus, error) {
	defer p.release()
	var r reply
	if _, err := recv(p.conn, &r); err == nil && r.Exited {
		// The init killed and reaped everything else before reporting.
		p.dropped = r.Dropped
		return syscall.WaitStatus(r.Status), nil
	}
	// The init died without reporting (killed from outside): its pidfd
	// turns readable only once the kernel has killed and reaped everything
	// else in its PID namespace.
	if err := waitReadable(p.pidfd); err != nil {
		return 0, err
	}
	return syscall.WaitStatus(unix.SIGKILL), nil
}

func (p *Process) release() {
	p.once.Do(func() {
		p.conn.Close()
		unix.Close(p.pidfd)
		removeTmp(p.tmpDir)
	})
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
