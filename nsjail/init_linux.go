package nsjail

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/environ"
	"github.com/corralhq/corral/internal/guard"
	"github.com/corralhq/corral/internal/lookpath"
	"github.com/corralhq/corral/limits"
	"github.com/corralhq/corral/mounts"
)

// initName is the hidden subcommand the sandbox's PID 1 runs as.
const initName = "__sandbox-init"

// initFd is where the init finds its socket (the first of ExtraFiles).
const initFd = 3

// forwarded are the signals the init passes on to the command.
var forwarded = []os.Signal{
	unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGUSR1, unix.SIGUSR2,
	unix.SIGWINCH, unix.SIGCONT, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU, unix.SIGALRM,
}

// initMain is PID 1 of a sandbox. Its exit status is the command's (128+N
// for signal N); 125 when the sandbox could not be built.
func initMain([]string) int {
	// Hold the thread group's leader, whichever thread it is, so that the
	// init proper cannot land on it.
	runtime.LockOSThread()
	return offLeader(runInit)
}

// offLeader runs fn on a locked thread that is not the thread group's
// leader, and returns what it returns.
//
// The init confines that thread (Landlock, seccomp) and starts the command
// from it, so the command shares its Landlock domain. A bare sandbox has no
// PID namespace to make the init unkillable, and scoping lets the command
// signal what shares its domain: with the leader left outside it, a kill
// of the init's pid is refused, and the shield (see confine) refuses the
// calls that could still reach the one confined thread by its id.
func offLeader(fn func() int) int {
	res := make(chan int, 1)
	go func() {
		// The thread stays with the goroutine until the init exits: the
		// command's parent-death signal fires when it ends.
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// The caller was not on the leader: keep this goroutine on it
			// while another runs fn.
			res <- offLeader(fn)
			return
		}
		res <- fn()
	}()
	return <-res
}

// runInit is the init proper, on a thread of its own (see offLeader).
// Privileges are dropped on that thread only, and the command inherits
// them from it.
func runInit() int {
	// Subscribing to signals starts a runtime thread, which takes as long as
	// building the sandbox: let it happen on another core meanwhile.
	// Signals that arrive before the command exists wait in the channel.
	subscribed := make(chan chan os.Signal, 1)
	go func() {
		signals := make(chan os.Signal, 16)
		signal.Notify(signals, forwarded...)
		absorbFaultSignals()
		subscribed <- signals
	}()
	conn, err := fileConn(os.NewFile(initFd, "corral-init"))
	closeInherited()
	var s setup
	if err == nil {
		// The hello first: a caller that started this binary as a helper
		// learns from it that the binary is corral's and speaks its
		// protocol, before it trusts any reply.
		if err = sayHello(conn); errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) {
			return 125 // the caller went away: no news
		}
	}
	if err == nil {
		_, err = recv(conn, &s)
	}
	if err != nil {
		// A caller that went away before sending the setup (a process
		// exiting while a sandbox was being built ahead) is no news.
		if !errors.Is(err, io.EOF) {
			os.Stderr.WriteString("corral: " + initName + " is started by corral itself, not by hand\n")
		}
		return 125
	}
	quietStderr()
	defer cleanUp(&s)
	if f := build(&s); f != nil {
		send(conn, reply{Fail: f})
		return 125
	}
	if err := limitPrivileges(); err != nil {
		send(conn, reply{Fail: failureOf(LayerPrivileges, "", err)})
		return 125
	}
	signals := <-subscribed
	err = send(conn, reply{Ready: true, Sources: sources(&s)}, s.listeners...)
	// The caller holds the listeners now; none stays with the command.
	closeFiles(s.listeners)
	s.listeners = nil
	if s.dialer != nil {
		go serveDialer(s.dialer)
	}
	if err != nil {
		return 125
	}
	var req execReq
	files, err := recv(conn, &req)
	if err != nil || len(files) != 3+req.Extra {
		closeFiles(files)
		return 125
	}
	var terminal []*os.File // with req.TTY: the pseudo-terminal's caller side
	if req.TTY {
		master, f := openTerminal(s.Bare, files)
		if f != nil {
			closeFiles(files)
			send(conn, reply{Fail: f})
			return 127
		}
		terminal = []*os.File{master}
	}
	pid, planted, f := startCommand(&s, &req, files)
	closeFiles(files)
	if f != nil {
		closeFiles(terminal)
		send(conn, reply{Fail: f})
		return 127
	}
	err = send(conn, reply{Started: true}, terminal...)
	closeFiles(terminal) // the caller's now
	if err != nil {
		return 125
	}
	s.listener.goLive(conn)
	go watchLifeline(conn, &s)
	go forward(signals, pid)
	if s.guard != nil {
		go watchMounts(s.guard)
	}
	status, usage := reap(pid)
	lifted := liftedFailure()
	var dropped []string
	hits := limitsHit(&s, status, usage)
	if !s.Bare {
		killRest()
		// Nothing inside runs any more: merge the staged git directories
		// and hold what was planted.
		landCreated(planted)
		planted.Killed(status.Signaled())
		dropped = planted.Finish()
		planted.Close()
	}
	cleanUp(&s)
	// Everything the command left behind is gone by now, so the caller need
	// not wait for the namespaces to be torn down.
	send(conn, reply{Exited: true, Status: uint32(status), Rusage: usage, Fail: lifted, Dropped: summarized(dropped), Hits: hits,
		Violations: s.listener.report()})
	return exitCode(status)
}

// build makes the sandbox's world: the mount tree and the network, or for a
// bare sandbox its temp dir.
func build(s *setup) *failure {
	if f := resolveSeccomp(s); f != nil {
		return f
	}
	if s.Bare {
		return prepareBare()
	}
	if err := mounts.Execute(s.Plan); err != nil {
		if f := rootGone(s, err); f != nil {
			return f
		}
		return failureOf(mountLayer(err), "", err)
	}
	if f := guardMounts(s); f != nil {
		return f
	}
	// The configuration's own protected names join the list before
	// Prepare reads the roots with every name protected.
	guard.Also(s.Paths.Protected)
	// Detached mounts are mount namespaces of their own: made before
	// forbidNamespaces.
	g, err := guard.Prepare(s.Paths.Writable, len(s.Seccomp) > 0 && canResolve(), s.Paths.TmpSize)
	if err != nil {
		return failureOf(LayerProtect, "", err)
	}
	s.planting = g
	if s.NetNone || s.NetProxy {
		if err := loopbackUp(); err != nil {
			return failureOf(LayerNetNS, "lo", err)
		}
	}
	if f := netListeners(s); f != nil {
		return f
	}
	if err := forbidNamespaces(s.guard != nil); err != nil {
		return failureOf(LayerNSLimits, "/proc/sys/user", err)
	}
	if err := limitInotify(); err != nil {
		return failureOf(LayerNSLimits, "/proc/sys/user", err)
	}
	return nil
}

// namespaceLimits are the per-user-namespace limits set to zero, so nothing
// in the sandbox can create a namespace of any kind: creating one needs a
// new user namespace first, and the kernel checks these limits at every
// level of nesting.
var namespaceLimits = []string{
	"max_user_namespaces", "max_mnt_namespaces", "max_pid_namespaces", "max_net_namespaces",
	"max_ipc_namespaces", "max_uts_namespaces", "max_cgroup_namespaces", "max_time_namespaces",
}

func forbidNamespaces(guarded bool) error {
	for _, name := range namespaceLimits {
		limit := "0\n"
		if guarded && name == "max_mnt_namespaces" {
			limit = guardMountNamespaces
		}
		err := writeKnob("/proc/sys/user/"+name, []byte(limit))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// mountLayer names the layer a mount failure belongs to: a changeset's
// overlay is its own layer, so the caller learns that the changeset, not
// the sandbox as a whole, could not be set up.
func mountLayer(err error) Layer {
	var me *mounts.Error
	if errors.As(err, &me) && me.Kind == mounts.Overlay {
		return LayerOverlay
	}
	return LayerMount
}

// startCommand drops every privilege on this thread, then starts the command
// as its child in a new session. In a namespaced sandbox it first guards
// the protected entries of the writable roots (see internal/guard); the
// session it returns is finished once the command has exited.
func startCommand(s *setup, req *execReq, stdio []*os.File) (int, *guard.Session, *failure) {
	if f := checkTaken(s); f != nil {
		return 0, nil, f
	}
	dir, home := req.Dir, s.Workspace
	if home == "" {
		home = "/tmp" // no workspace: the command's private /tmp
	}
	if dir == "" {
		dir = home
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(home, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = unix.ENOTDIR
		}
		return 0, nil, failureOf(LayerWorkdir, dir, err)
	}
	path, err := lookpath.Find(req.Path, dir, req.Env, os.Stat)
	if err != nil {
		return 0, nil, execFailure(req.Path, err)
	}
	// A bare sandbox shares the host's mount table: Landlock protects those
	// paths there (confine), and a mount here would change the host.
	var planted *guard.Session
	if !s.Bare {
		if err := mounts.ProtectNow(s.Plan); err != nil {
			return 0, nil, failureOf(LayerMount, "", err)
		}
		planted = s.planting
		planted.SetHomes(s.Paths.Homes)
		if err := planted.Start(s.Paths.Protected, slices.Concat(s.Paths.ReadOnly, s.Paths.Hidden)); err != nil {
			planted.Close()
			return 0, nil, failureOf(LayerProtect, "", err)
		}
		holdProtected(s, planted.ReadOnly())
	}
	fail := func(f *failure) (int, *guard.Session, *failure) {
		planted.Close()
		return 0, nil, f
	}
	if err := dropCapabilities(); err != nil {
		return fail(failureOf(LayerPrivileges, "", err))
	}
	// The layers go on last, right before the command starts: Landlock's
	// rules bind to the inodes of the finished tree, and the filter must
	// not stand in the way of building it.
	if req.Report {
		s.reportReads = req.Reads
	}
	if f := confine(s, stdio[:3], planted.Reachable(), withExecLimit(s, commandWatch(s, planted, req.Report))); f != nil {
		return fail(f)
	}
	if f := connectsKept(s); f != nil {
		return fail(f)
	}
	env, sys := req.Env, &syscall.SysProcAttr{Setsid: true}
	if req.TTY {
		sys.Setctty, sys.Ctty = true, 0 // the new session's terminal (openTerminal)
	}
	if s.Bare {
		env = environ.Set(env, "TMPDIR="+s.TmpDir)
		sys.Pdeathsig = unix.SIGKILL // no PID namespace ends it with us
	}
	// Last, as the init is under them too from here on: building the
	// Landlock rules above needs descriptors, for one. A memory limit the
	// listener sets on the command alone, at its first exec (execLimit).
	if err := limits.Apply(limitsOfInit(s), s.PidsRlimit); err != nil {
		return fail(failureOf(LayerLimits, "", err))
	}
	// syscall rather than os: os.StartProcess first checks, once per
	// process, that the kernel's CLONE_PIDFD works by forking a child that
	// exits at once, which would double the cost of the init's only fork.
	// stdio holds the command's 0, 1 and 2, then its ExtraFiles for 3 and
	// up: nothing else of ours crosses the exec (closeInherited).
	fds := make([]uintptr, len(stdio))
	for i, f := range stdio {
		fds[i] = f.Fd()
	}
	pid, err := syscall.ForkExec(path, req.Args, &syscall.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: fds,
		Sys:   sys,
	})
	if err := s.listener.forked(); err != nil {
		return fail(failureOf(LayerLimits, "", err))
	}
	if err != nil {
		return fail(execFailure(req.Path, &fs.PathError{Op: "fork/exec", Path: path, Err: err}))
	}
	return pid, planted, nil
}

// limitsHit says which limits the command ran into, from how it ended and
// what it left: called once it has exited, before the rest is killed.
func limitsHit(s *setup, status unix.WaitStatus, usage *syscall.Rusage) []limits.Name {
	if s.Limits == (limits.Set{}) {
		return nil
	}
	o := limits.Outcome{Status: syscall.WaitStatus(status)}
	if usage != nil {
		o.MaxRSS = usage.Maxrss << 10
	}
	if !s.Bare {
		// Only here is /proc the sandbox's own, and /tmp its tmpfs. The
		// tasks left count only for a command that failed: not worth a
		// walk of /proc otherwise.
		if s.Limits.Pids > 0 && (status.Signaled() || status.ExitStatus() != 0) {
			o.TasksLeft = limits.TasksLeft()
		}
		if s.Limits.TmpSize > 0 {
			o.TmpFull = limits.Full("/tmp") || limits.Full("/dev/shm")
		}
	}
	return limits.Detect(s.Limits, o)
}

// execFailure is the failure to find or start the command name: with a
// code when the caller has a typed error for it.
func execFailure(name string, err error) *failure {
	f := failureOf(LayerExec, name, err)
	switch {
	case errors.Is(err, lookpath.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		f.Code, f.Msg = codeNotFound, lookpath.ErrNotFound.Error()
	case errors.Is(err, lookpath.ErrNotExecutable), errors.Is(err, fs.ErrPermission),
		errors.Is(err, unix.ENOEXEC), errors.Is(err, unix.EISDIR):
		f.Code, f.Msg = codeNotExecutable, lookpath.ErrNotExecutable.Error()
	}
	return f
}

// limitPrivileges leaves the calling thread, and so the command, no way
// to gain a capability: no_new_privs is set and the bounding and ambient
// sets are emptied. The effective set stays for the mounts still to come
// when the command starts (ProtectNow); dropCapabilities empties it then.
// Done while the sandbox is built, this is off the path of a command
// taking a sandbox built ahead.
//
// Preconditions: must be called with the OS thread locked.
func limitPrivileges() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(NO_NEW_PRIVS)", err)
	}
	last := lastCap()
	for c := 0; c <= last; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		// Without namespaces an ordinary user may not drop from the bounding
		// set; it matters only to root, whose exec would regain it.
		if err == unix.EPERM && os.Geteuid() != 0 {
			break
		}
		if err != nil && err != unix.EINVAL {
			return os.NewSyscallError("prctl(CAPBSET_DROP)", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(CAP_AMBIENT_CLEAR_ALL)", err)
	}
	return nil
}

// dropCapabilities empties the effective, permitted and inheritable sets of
// the calling thread, after limitPrivileges: the command starts with none.
//
// Preconditions: must be called with the OS thread locked.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return os.NewSyscallError("capset", err)
	}
	return nil
}

func lastCap() int {
	b, err := readKnob("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63
	}
	n := 0
	for _, c := range strings.TrimSpace(string(b)) {
		n = n*10 + int(c-'0')
	}
	return n
}

// loopbackUp brings lo up in the new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return os.NewSyscallError("SIOCGIFFLAGS", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return os.NewSyscallError("SIOCSIFFLAGS", err)
	}
	return nil
}

// reap waits for every child the init inherits until the command itself
// exits, and returns its status and resource usage. Returning ends the init,
// and with it the PID namespace: whatever the command left behind is killed.
func reap(pid int) (unix.WaitStatus, *syscall.Rusage) {
	for {
		var ws unix.WaitStatus
		var ru syscall.Rusage
		got, err := syscall.Wait4(-1, (*syscall.WaitStatus)(&ws), 0, &ru)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return unix.WaitStatus(unix.SIGKILL), nil // no children left: cannot happen before pid exits
		}
		if got == pid {
			return ws, &ru
		}
	}
}

// killRest kills every other process in the PID namespace (kill(-1) from
// its PID 1 reaches exactly those) and reaps them.
func killRest() {
	unix.Kill(-1, unix.SIGKILL)
	for {
		_, err := unix.Wait4(-1, nil, 0, nil)
		if err != unix.EINTR && err != nil {
			return // ECHILD: nobody left
		}
	}
}

// watchLifeline ends the sandbox when the caller goes away: its end of the
// socket closes even when it is killed. A bare sandbox's processes are
// killed first, as no PID namespace takes them along. A namespaced
// sandbox's processes are killed by the init, which then finishes as after
// any command (merging staged git directories, holding planted entries).
func watchLifeline(conn *conn, s *setup) {
	for {
		var c control
		if _, err := recv(conn, &c); err != nil {
			if s.Bare {
				cleanUp(s)
				os.Exit(128 + int(unix.SIGKILL))
			}
			// Everything else in the PID namespace dies; the init goes
			// on to merge and hold what the command wrote, then exits.
			unix.Kill(-1, unix.SIGKILL)
			return
		}
		if c.Kill {
			if s.Bare {
				killDescendants()
			} else {
				unix.Kill(-1, unix.SIGKILL)
			}
		}
	}
}

// faultSignals are the signals Go's runtime treats as a crash of its own:
// without a handler of ours, one sent by the command (kill -ABRT 1) would
// end the init with a stack dump.
var faultSignals = []os.Signal{
	unix.SIGILL, unix.SIGTRAP, unix.SIGABRT, unix.SIGBUS, unix.SIGFPE, unix.SIGSEGV,
	unix.SIGSTKFLT, unix.SIGSYS,
}

// absorbFaultSignals makes the init survive every fault signal sent to it
// with kill or tgkill: the runtime hands such signals to the channel and
// the init drops them. A fault signal queued with another code (sigqueue,
// a file's F_SETSIG signal) would still pass for a real fault; the seccomp
// filter keeps the command from sending those. The handlers are the
// runtime's, so the command starts with default dispositions, not ignored
// ones.
func absorbFaultSignals() {
	c := make(chan os.Signal, 8)
	signal.Notify(c, faultSignals...)
	go func() {
		for range c {
		}
	}()
}

// quietStderr points the init's stderr at /dev/null once corral has
// spoken to it: the command must never make the init print on the
// caller's screen (a runtime dump, were the init to crash anyway). Every
// failure travels to the caller on the socket instead.
func quietStderr() {
	null, err := unix.Open(os.DevNull, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	unix.Dup3(null, 2, 0)
	unix.Close(null)
	debug.SetTraceback("none")
}

func forward(signals <-chan os.Signal, pid int) {
	for sig := range signals {
		unix.Kill(pid, sig.(unix.Signal))
	}
}

// exitCode maps a wait status to the init's own exit status.
func exitCode(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// maxDropped bounds the lines of what was dropped that the exit reply
// carries, so that the reply stays within a message whatever the command
// left (5,000 junk entries in a .git): the rest is counted.
const maxDropped = 200

// maxDroppedLine bounds one line: a path is at most PATH_MAX.
const maxDroppedLine = 4 << 10

func summarized(dropped []string) []string {
	if len(dropped) == 0 {
		return dropped
	}
	out := make([]string, 0, min(len(dropped), maxDropped+1))
	for i, d := range dropped {
		if i == maxDropped {
			out = append(out, fmt.Sprintf("%d more entries, not listed", len(dropped)-maxDropped))
			break
		}
		if len(d) > maxDroppedLine {
			d = d[:maxDroppedLine] + "..."
		}
		out = append(out, d)
	}
	return out
}
