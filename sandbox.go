package corral

import (
	"context"
	"os"
	"runtime"
	"syscall"
)

// Sandbox runs commands under one Config. It is safe for concurrent use;
// create it once and share it.
type Sandbox struct {
	spec    *spec
	env     []string // the default environment, computed once
	backend backend
	logf    func(format string, args ...any)
	// violations are the refusals no single command can be named for.
	violations violationLog
}

// New validates cfg, canonicalizes its paths and prepares the platform
// backend. Errors name the field or path that is wrong.
func New(cfg Config) (*Sandbox, error) {
	s, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if err := s.openChangeset(cfg); err != nil {
		return nil, err
	}
	sb := &Sandbox{spec: s, env: defaultEnv(os.Environ(), s.Env), logf: cfg.Logf}
	if sb.logf == nil {
		sb.logf = func(string, ...any) {}
	}
	s.logf = sb.logf
	if s.Mode == ModeDisabled {
		sb.logf("corral: sandbox disabled: commands run with full host access")
		sb.backend = &directBackend{workspace: s.Workspace}
		return sb, nil
	}
	if !initCalled.Load() {
		return nil, ErrNoInit
	}
	if runtime.GOOS != "linux" {
		if err := s.destsOn(RungSeatbelt); err != nil {
			return nil, err
		}
	}
	if s.hasPersist() && runtime.GOOS != "linux" {
		return nil, s.persistRefusal(RungSeatbelt)
	}
	if s.Egress != nil {
		if err := s.Egress.useCallerProxy(); err != nil {
			return nil, err
		}
		s.refused = sb.recordViolation
	}
	if s.Secrets != nil {
		if err := s.Secrets.prepare(s); err != nil {
			return nil, err
		}
	}
	if sb.backend, err = newBackend(s); err != nil {
		s.Secrets.cleanup()
		return nil, err
	}
	runtime.AddCleanup(sb, func(p *secretPolicy) { p.cleanup() }, s.Secrets)
	// Sandboxes kept ready for commands are released with the Sandbox even
	// when nobody calls Close.
	runtime.AddCleanup(sb, func(b backend) { b.close() }, sb.backend)
	return sb, nil
}

// Command returns a Cmd that runs name with args inside the sandbox. When ctx
// is done, the whole sandbox is killed.
func (sb *Sandbox) Command(ctx context.Context, name string, args ...string) *Cmd {
	if ctx == nil {
		panic("corral: nil Context")
	}
	c := &Cmd{
		Path: name,
		Args: append([]string{name}, args...),
		sb:   sb,
		ctx:  ctx,
	}
	c.Cancel = c.kill
	return c
}

// Workspace returns the canonical workspace path: empty with
// Config.NoWorkspace.
func (sb *Sandbox) Workspace() string { return sb.spec.Workspace }

// NoWorkspace reports whether the sandbox has no workspace
// (Config.NoWorkspace): its commands start in their private /tmp.
func (sb *Sandbox) NoWorkspace() bool { return sb.spec.NoWorkspace }

// Close releases the sandboxes kept built ahead of time for commands.
// Commands already running are not affected, except that with
// NetworkAllow on the landlock and seatbelt rungs, where the proxy the
// commands share listens on the host's loopback, that proxy stops.
func (sb *Sandbox) Close() error {
	defer sb.spec.Secrets.cleanup()
	return sb.backend.close()
}

// Warm blocks until the sandboxes kept built ahead for commands are ready
// (on Linux, Config.Ahead of them), or ctx is done. A sandbox a command took
// is replaced once that command is done, or has run for a second; Warm
// builds such replacements at once. Commands do not need it: it
// lets a program pay for building them at start-up, before its first
// command, and lets a benchmark time what a command costs when it does not
// follow another one at once.
func (sb *Sandbox) Warm(ctx context.Context) error {
	if w, ok := sb.backend.(interface{ warm(context.Context) error }); ok {
		return w.warm(ctx)
	}
	return nil
}

// backend starts commands for one platform's way of sandboxing.
type backend interface {
	start(req *startRequest) (process, error)
	close() error
}

// startRequest is one command to start.
type startRequest struct {
	Name  string
	Args  []string
	Env   []string
	Dir   string
	Stdio [3]*os.File
	// ExtraFiles go to descriptors 3 and up; nothing else of the caller's
	// reaches the command.
	ExtraFiles []*os.File
	// Refused receives what the sandbox refused the command.
	Refused func(Violation)
	// violation is where the backend reports a refusal while the command
	// runs: the first time it sees it, with Count 1 (see Cmd.noteViolation).
	violation func(Violation)
	// report asks the backend to watch the command's writes; reads, to
	// watch its reads of hidden paths too (Config.ReportReads).
	report, reads bool
	// terminal gives the command a pseudo-terminal (Cmd.Terminal).
	terminal bool
}

// process is a started command.
type process interface {
	// OSProcess is the process the caller sees as Cmd.Process.
	OSProcess() *os.Process
	// Wait blocks until the command has exited and every process it left
	// behind is gone, then releases what the process held: after it, Kill
	// returns os.ErrProcessDone and acts on nothing.
	Wait() (exit, error)
	// Kill ends the command and everything it started.
	Kill() error
	// Terminal is the caller's side of the command's pseudo-terminal
	// (Cmd.Terminal), or nil.
	Terminal() *os.File
}

// exit is how a command ended.
type exit struct {
	status syscall.WaitStatus
	rusage *syscall.Rusage // nil when unknown
}
