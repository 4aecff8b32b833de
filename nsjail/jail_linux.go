package nsjail

import (
	"errors"
	"fmt"
	"io"
	"net"
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
	// Overlays are writable roots (the workspace, for a changeset) mounted
	// as overlayfs so that writes land in an upper directory instead.
	Overlays []mounts.OverlayRoot
	// Direct clones sandboxes from the calling process instead of a spawner,
	// and keeps none built ahead. It saves starting the spawner and suits
	// small, short-lived callers such as the CLI; a caller with a large heap
	// pays a full fork per spawn.
	Direct bool
}

// warm is how many sandboxes a Jail keeps built ahead of time, waiting for
// a command. Each is an idle init of a few MiB.
const warm = 2

// Jail starts commands in sandboxes built from one Options.
type Jail struct {
	setup   setup
	cloner  cloner
	netNone bool
	pool    *pool
}

// cloner produces fresh inits: a connection to one and its host pid.
type cloner interface {
	clone(netNone bool) (*net.UnixConn, int, error)
}

// New prepares a Jail. The mount plan is computed here, once.
func New(o Options) (*Jail, error) {
	plan := mounts.Build(mounts.Input{
		Writable:  append([]string{o.Workspace}, o.Writable...),
		ReadOnly:  o.ReadOnly,
		Hidden:    o.Hidden,
		Protected: o.Protected,
		Overlays:  o.Overlays,
	})
	j := &Jail{setup: setup{Plan: plan, NetNone: o.NetNone, Workspace: o.Workspace}, netNone: o.NetNone}
	ahead := warm
	if o.Direct {
		j.cloner = directCloner{}
		ahead = 0
	} else {
		j.cloner = sharedSpawner()
	}
	if len(o.Overlays) > 0 {
		// An overlay may be mounted only while its command runs: a sandbox
		// built ahead would hold it beside the running one, and across an
		// apply that changes the layers under it.
		ahead = 0
	}
	j.pool = newPool(ahead, j.build)
	return j, nil
}

// Close kills the sandboxes kept ready. Running commands are not affected.
func (j *Jail) Close() error {
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
	if p := j.pool.take(); p != nil {
		if err := p.exec(c); err == nil {
			return p, nil
		}
		// A ready sandbox that fails now was killed while it waited: the
		// command deserves a fresh one rather than that error.
		p.Kill()
		p.release()
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

// build clones an init and has it build the sandbox, up to the point where
// it waits for a command.
func (j *Jail) build() (*Process, error) {
	conn, pid, err := j.cloner.clone(j.netNone)
	if err != nil {
		return nil, &Error{Layer: "namespaces", Err: err}
	}
	// Open the handle before the first round trip: the init answering
	// afterwards proves the pid still named it.
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		conn.Close()
		return nil, &Error{Layer: "init", Err: os.NewSyscallError("pidfd_open", err)}
	}
	p := &Process{conn: conn, pid: pid, pidfd: pidfd}
	if err := p.call(&j.setup, nil, func(r *reply) bool { return r.Ready }); err != nil {
		p.Kill()
		p.release()
		return nil, err
	}
	return p, nil
}

// Process is a running sandbox.
type Process struct {
	conn  *net.UnixConn
	pid   int
	pidfd int
	once  sync.Once
}

// exec starts c in the built sandbox.
func (p *Process) exec(c *Command) error {
	req := &execReq{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir}
	return p.call(req, c.Stdio[:], func(r *reply) bool { return r.Started })
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

// Kill ends the sandbox: killing its PID 1 kills everything inside.
func (p *Process) Kill() error {
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
	status := syscall.WaitStatus(unix.SIGKILL)
	var r reply
	if _, err := recv(p.conn, &r); err == nil && r.Exited {
		status = syscall.WaitStatus(r.Status)
	}
	// The init reports before it exits; its pidfd turns readable only once
	// the kernel has killed and reaped everything else in its PID namespace.
	if err := waitReadable(p.pidfd); err != nil {
		return 0, err
	}
	return status, nil
}

func (p *Process) release() {
	p.once.Do(func() {
		p.conn.Close()
		unix.Close(p.pidfd)
	})
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
