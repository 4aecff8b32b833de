package nsjail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/testhook"
	"github.com/corralhq/corral/limits"
	"github.com/corralhq/corral/mounts"
)

// Options describe a sandbox. Paths are absolute and canonical.
type Options struct {
	// Workspace is the default working directory, writable; empty for
	// none, when commands start in their private /tmp.
	Workspace string
	Writable  []string // besides the workspace
	ReadOnly  []string
	Hidden    []string
	Protected []string // names relative to each writable root
	Homes     []string // the caller's homes (mounts.Input.Homes)
	NetNone   bool
	// NetProxy gives the sandbox a network namespace with only loopback,
	// like NetNone, in which the init listens on two TCP ports of
	// 127.0.0.1 (an HTTP proxy's and a SOCKS5 proxy's) and hands the
	// listening sockets to the caller to serve: see Command.Serve.
	NetProxy bool
	// ConnectOnly, in a bare sandbox with Landlock's DenyTCP and a seccomp
	// filter, are the only addresses the command's TCP connections reach
	// (the proxy's on the host's loopback): the init makes each connection
	// itself, and refuses the rest (see commandWatch).
	ConnectOnly []netip.AddrPort
	// HostPorts, with NetNone or NetProxy, are ports the init listens on
	// at 127.0.0.1 and [::1] of the sandbox's namespace, handed to the
	// caller with the proxy's listeners to serve (see hostports_linux.go).
	HostPorts []uint16
	// Publish, with NetNone or NetProxy, has the init hand the caller a
	// dialer (see Dialer) as the last of the listeners, through which it
	// reaches the command's servers on the sandbox's loopback.
	Publish bool
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
	// IdleTimeout reaps the sandboxes built ahead when no command took one
	// for that long; they are built again on the next command. Zero keeps
	// them for good.
	IdleTimeout time.Duration
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
	// Limits are the command's limits: rlimits, and the size of /tmp and
	// /dev/shm. PidsRlimit sets the pids limit as RLIMIT_NPROC, which holds
	// only in the sandbox's own user namespace and for a caller other than
	// root (see package limits). PidsExact has the init's listener set it
	// on the command alone, so that the init's threads are not counted
	// (execLimit): for a limit the caller asked for, as it costs every
	// exec of the command a stop in the listener.
	Limits     limits.Set
	PidsRlimit bool
	PidsExact  bool
	// Cgroup, when set, is where each sandbox gets a cgroup of its own
	// with the Limits a cgroup enforces, its init moved in before it
	// builds anything.
	Cgroup *limits.Hierarchy
	// Helper, when set, is the binary the inits run instead of the
	// caller's own (see OpenHelper): started through the helper's
	// spawner, or with Direct cloned from this process running the
	// helper, each init then proving with its hello that the binary is
	// corral's and speaks this protocol.
	Helper *Helper
}

// Landlock says which of Landlock's features the sandbox uses. The rules
// themselves are computed by the init from the sandbox's paths.
type Landlock struct {
	ABI int
	// Scope confines abstract unix sockets and signals to the sandbox.
	Scope bool
	// DenyTCP refuses TCP bind and connect, for Network=none without a
	// network namespace, except connect to the ports in ConnectTCP.
	DenyTCP    bool
	ConnectTCP []uint16 `json:",omitempty"`
	// NoSockets grants no right to make socket files (MAKE_SOCK), for a
	// command that may not make unix sockets: a socketpair's socket would
	// still bind to a name.
	NoSockets bool `json:",omitempty"`
}

// Jail starts commands in sandboxes built from one Options.
type Jail struct {
	setup    setup
	cloner   cloner
	netNS    bool // a network namespace of its own
	pool     *pool
	first    *first // a direct caller's first sandbox, built from New on
	bare     bool
	tempBase string
	cgroup   *limits.Hierarchy
	limits   limits.Set
	helper   *Helper // inits cloned directly run it: each hello is checked
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
	if o.Bare && o.NetProxy {
		return nil, &Error{Layer: LayerNetNS, Err: errors.New("proxy listeners need a network namespace")}
	}
	if (len(o.HostPorts) > 0 || o.Publish) && (o.Bare || !o.NetNone && !o.NetProxy) {
		return nil, &Error{Layer: LayerNetNS, Err: errors.New("host ports and published ports need a network namespace")}
	}
	if len(o.ConnectOnly) > 0 && (!o.Bare || o.Landlock == nil || !o.Landlock.DenyTCP || len(o.Seccomp) == 0) {
		return nil, &Error{Layer: LayerSeccomp, Err: errors.New("connections made by the init need a bare sandbox, Landlock refusing TCP and a seccomp filter")}
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
		Plan: mounts.Build(in), Paths: in, NetNone: o.NetNone, NetProxy: o.NetProxy && !o.Bare, Workspace: o.Workspace,
		Landlock: o.Landlock, Seccomp: o.Seccomp, Bare: o.Bare, ConnectOnly: o.ConnectOnly,
		HostPorts: o.HostPorts, Dialer: o.Publish,
		NoGuard: testhook.Disabled(testhook.Guard), NoPtrace: testhook.Disabled(testhook.Ptrace),
		Limits: o.Limits, PidsRlimit: o.PidsRlimit, PidsExact: o.PidsExact, MemoryCgroup: o.Cgroup != nil,
	}, netNS: o.NetNone || o.NetProxy, bare: o.Bare, tempBase: o.TempBase, cgroup: o.Cgroup, limits: o.Limits}
	nameSeccomp(&j.setup)
	switch {
	case o.Helper != nil && o.Direct:
		// Each init checks itself with its hello.
		j.helper = o.Helper
		j.cloner = directCloner{helper: o.Helper}
		if o.Bare {
			j.cloner = bareCloner{helper: o.Helper}
		}
	case o.Helper != nil:
		if err := checkHelper(o.Helper); err != nil {
			return nil, err
		}
		j.cloner = spawnerCloner{helper: o.Helper, bare: o.Bare}
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
	// A direct caller is short-lived: only its first sandbox is built ahead,
	// and the os package's once-per-process check of pidfds (a fork, which
	// OSProcess would pay in Start) is done now, beside the first init's
	// start-up.
	if o.Direct {
		go warmPidfd()
		if ahead > 0 {
			j.first = startFirst(j.build)
		}
		ahead = 0
	}
	j.pool = newPool(ahead, j.build)
	j.pool.reapAfter(o.IdleTimeout)
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
	// Serve, with Options.NetProxy, HostPorts or Publish, is given the
	// sandbox's listening sockets (the HTTP proxy's, then the SOCKS5
	// proxy's, then the host ports' on 127.0.0.1 and [::1], then the
	// dialer) right before the command starts, with Env. It serves them on duplicates (the sandbox
	// closes its own when released) and returns the environment to start
	// the command with, naming the ports, and a function called once the
	// sandbox is released, which must end whatever it serves.
	Serve func(listeners []*os.File, env []string) ([]string, func(), error)
	// OnViolation, when set, is called from Wait with each refusal the
	// first time the init reports it (see Options.Report).
	OnViolation func(Violation)
	// Report has the init watch the command's write calls through a
	// seccomp listener and report those the policy refuses
	// (Process.Violations). It needs Options.Seccomp, and a kernel that
	// passes seccomp.ListenerSupport.
	Report bool
	// ReportReads, with Report, has the init watch the command's reads of
	// hidden paths too: every open and exec then stops in the listener.
	ReportReads bool
	// Terminal gives the command a pseudo-terminal of the sandbox's own
	// devpts, in place of Stdio, as its controlling terminal; the other
	// side is Process.Terminal.
	Terminal bool
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
		sweepStaleTmp(j.tempBase)
		dir, err := os.MkdirTemp(j.tempBase, tmpPrefix())
		if err != nil {
			return nil, &Error{Layer: LayerTmp, Path: j.tempBase, Err: err}
		}
		s.TmpDir = dir
	}
	conn, pid, err := j.cloner.clone(j.netNS)
	if err != nil {
		removeTmp(s.TmpDir)
		var e *Error
		if errors.As(err, &e) {
			return nil, err // a helper that cannot serve says so itself
		}
		return nil, &Error{Layer: LayerNamespaces, Err: err}
	}
	exit := takeInitExit(pid)
	// Open the handle before the first round trip: the init answering
	// afterwards proves the pid still named it.
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil && j.helper != nil {
		// A helper that is not corral's may be gone already: its missing
		// hello says why.
		if herr := awaitHello(conn, j.helper.path); herr != nil {
			err = herr
		}
	}
	if err != nil {
		conn.Close()
		forgetInitExit(pid, exit)
		removeTmp(s.TmpDir)
		var e *Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, &Error{Layer: LayerInit, Err: os.NewSyscallError("pidfd_open", err)}
	}
	p := &Process{conn: conn, pid: pid, pidfd: pidfd, bare: j.bare, tmpDir: s.TmpDir, exit: exit, released: make(chan struct{})}
	if j.cgroup != nil {
		// The init waits for its setup: nothing has run inside yet.
		// The pid names it for people; the count keeps a reused pid from
		// meeting a cgroup not yet removed.
		name := fmt.Sprintf("corral-%d-%d", pid, cgroupCount.Add(1))
		if p.cgroup, err = j.cgroup.New(name, j.limits); err == nil {
			err = p.cgroup.Add(pid)
		}
		if err != nil {
			p.Kill()
			p.release()
			return nil, &Error{Layer: LayerLimits, Path: j.cgroup.Dir, Err: err}
		}
	}
	files, err := p.setUp(&s, j.helper)
	p.listeners = files
	if err == nil && s.NetProxy && len(files) < 2 {
		err = &Error{Layer: LayerNetNS, Err: fmt.Errorf("the init sent %d proxy listeners, want 2", len(files))}
	}
	if err != nil {
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
	conn   *conn
	pid    int
	pidfd  int
	bare   bool
	tmpDir string
	exit   chan syscall.WaitStatus // the init's own status, once reaped
	// released is closed when release has run: the command is done.
	released chan struct{}
	sources  []source // what its binds showed when built
	// listeners are the proxy's listening sockets inside the sandbox's
	// network namespace (Options.NetProxy), closed by release; served is
	// what Command.Serve returned to end their serving.
	listeners []*os.File
	served    func()

	mu      sync.Mutex
	state   procState
	osProc  *os.Process
	dropped []string      // what the init did not merge back, with its exit
	hits    []limits.Name // the limits the command ran into, with its exit
	cgroup  *limits.Cgroup

	// terminal is the caller's side of the command's pseudo-terminal,
	// with Command.Terminal: the caller's to close.
	terminal *os.File

	onViolation func(Violation)
	violations  []Violation // what the policy refused, with its exit
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
	req := &execReq{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir, Extra: len(c.ExtraFiles), Report: c.Report, Reads: c.Report && c.ReportReads, TTY: c.Terminal}
	files := append(c.Stdio[:len(c.Stdio):len(c.Stdio)], c.ExtraFiles...)
	if len(files) > maxFiles {
		return &Error{Layer: LayerExec, Err: fmt.Errorf("%d extra files: at most %d", len(c.ExtraFiles), maxFiles-3)}
	}
	if err := p.serve(c, req); err != nil {
		return err
	}
	got, err := p.call(req, files, func(r *reply) bool { return r.Started })
	if err == nil && c.Terminal {
		if len(got) != 1 {
			closeFiles(got)
			return &Error{Layer: LayerExec, Err: errors.New("the init sent no terminal")}
		}
		p.terminal = got[0]
	} else {
		closeFiles(got)
	}
	if err == nil {
		p.onViolation = c.OnViolation
		p.mu.Lock()
		if p.state == stateBuilt {
			p.state = stateRunning
		}
		p.mu.Unlock()
	}
	return err
}

// serve hands the sandbox's proxy listeners to c.Serve, which sets the
// command's environment. A sandbox without listeners needs no Serve; one
// with them refuses a command without it, which would find no proxy.
func (p *Process) serve(c *Command, req *execReq) error {
	if len(p.listeners) == 0 {
		return nil
	}
	if c.Serve == nil {
		return &Error{Layer: LayerNetNS, Err: errors.New("the sandbox has proxy listeners but nothing serves them")}
	}
	env, done, err := c.Serve(p.listeners, c.Env)
	if err != nil {
		return &Error{Layer: LayerNetNS, Err: err}
	}
	p.mu.Lock()
	p.served = done
	p.mu.Unlock()
	req.Env = env
	return nil
}

// call sends msg and waits for the reply that ok accepts; it returns the
// files that came with the reply.
func (p *Process) call(msg any, files []*os.File, ok func(*reply) bool) ([]*os.File, error) {
	if err := send(p.conn, msg, files...); err != nil {
		return nil, &Error{Layer: LayerInit, Err: err}
	}
	return p.answer(ok)
}

// setUp sends a new init its setup and returns the listeners of its
// ready reply. The init's hello comes first: from a helper started
// directly, the one point where this process learns that the binary it
// ran is corral's, of the same protocol, it is awaited for a bounded time
// and checked; from the caller's own binary or a spawner that answered
// already, it is only read. The setup is sent before that wait, so the
// init finds it as soon as it can read.
func (p *Process) setUp(s *setup, helper *Helper) ([]*os.File, error) {
	if err := send(p.conn, s); err != nil {
		if helper != nil {
			// A helper that is not corral's may have closed its end: its
			// missing hello says why.
			if herr := awaitHello(p.conn, helper.path); herr != nil {
				return nil, herr
			}
		}
		return nil, &Error{Layer: LayerInit, Err: err}
	}
	if helper != nil {
		if err := awaitHello(p.conn, helper.path); err != nil {
			return nil, err
		}
	} else if _, err := recv(p.conn, &hello{}); err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("sandbox init exited during setup")
		}
		return nil, &Error{Layer: LayerInit, Err: err}
	}
	return p.answer(func(r *reply) bool { p.sources = r.Sources; return r.Ready })
}

// answer reads the init's reply, which ok accepts, and the files it
// carries.
func (p *Process) answer(ok func(*reply) bool) ([]*os.File, error) {
	var r reply
	got, err := recv(p.conn, &r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("sandbox init exited during setup")
		}
		return nil, &Error{Layer: LayerInit, Err: err}
	}
	if r.Fail != nil {
		closeFiles(got)
		return nil, r.Fail.err()
	}
	if !ok(&r) {
		closeFiles(got)
		return nil, &Error{Layer: LayerInit, Err: fmt.Errorf("unexpected reply %+v", r)}
	}
	return got, nil
}

// warmPidfd makes the os package run its check of pidfd support.
func warmPidfd() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
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

// LimitsHit returns, after Wait, the limits the command ran into, in the
// order of limits.Names: those its init saw it hit, and those its cgroup
// counted.
func (p *Process) LimitsHit() []limits.Name { return p.hits }

func mergeHits(a, b []limits.Name) []limits.Name {
	var out []limits.Name
	for _, n := range limits.Names() {
		if slices.Contains(a, n) || slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

// Dropped returns, after Wait, what the command wrote under protected names
// that was not merged back into the host or was moved aside, one line each.
func (p *Process) Dropped() []string { return p.dropped }

// Violations returns, after Wait, what the init saw the command try that
// the policy refuses, repeats merged (see Options.Report).
func (p *Process) Violations() []Violation { return p.violations }

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
	r, err := p.recvExit()
	if err == nil && r.Exited {
		// The init killed and reaped everything else before reporting.
		p.dropped = r.Dropped
		p.hits = r.Hits
		if p.cgroup != nil {
			p.hits = mergeHits(p.hits, p.cgroup.Hits())
		}
		p.violations = r.Violations
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

// recvExit reads the init's messages up to its report of the command's
// exit, handing each refusal sent meanwhile to onViolation.
func (p *Process) recvExit() (reply, error) {
	for {
		var r reply
		if _, err := recv(p.conn, &r); err != nil {
			return r, err
		}
		if r.Violation == nil {
			return r, nil
		}
		if p.onViolation != nil {
			p.onViolation(*r.Violation)
		}
	}
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
	if p.cgroup != nil {
		removeCgroup(p.cgroup, p.pidfd)
	}
	unix.Close(p.pidfd)
	closeFiles(p.listeners)
	if p.served != nil {
		p.served()
	}
	forgetInitExit(p.pid, p.exit)
	removeTmp(p.tmpDir)
	if p.released != nil {
		close(p.released)
	}
}

// cgroupCount numbers the cgroups this process makes.
var cgroupCount atomic.Uint64

// removeCgroup removes a sandbox's cgroup once its init, the last process
// in it, is gone; pidfd is the init's, which the caller closes after.
func removeCgroup(c *limits.Cgroup, pidfd int) {
	fd, err := unix.Dup(pidfd)
	if err != nil {
		return
	}
	go func() {
		defer unix.Close(fd)
		waitReadable(fd)
		c.Remove()
	}()
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
// the workspace, when there is one, first among the writable roots.
func (o Options) Input() mounts.Input {
	var ws []string
	if o.Workspace != "" {
		ws = []string{o.Workspace}
	}
	return mounts.Input{
		Writable:  append(ws, o.Writable...),
		ReadOnly:  o.ReadOnly,
		Hidden:    o.Hidden,
		Protected: o.Protected,
		Homes:     o.Homes,
		Overlays:  o.Overlays,
		TmpSize:   o.Limits.TmpSize,
		Sources:   o.Sources,
		Layered:   o.Layered,
		Tmp:       o.Tmp,
	}
}

// Terminal returns the caller's side of the command's pseudo-terminal
// (Command.Terminal), or nil. The caller closes it.
func (p *Process) Terminal() *os.File { return p.terminal }
