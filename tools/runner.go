package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/environ"
	"github.com/corralhq/corral/internal/lookpath"
)

// errTimedOut is the cause of a command context whose timeout fired, which
// tells it apart from the caller cancelling.
var errTimedOut = errors.New("tool timeout")

// defaultPath is the PATH a command gets when the sandbox's environment has
// none: the one a lookup inside the sandbox would search.
const defaultPath = lookpath.DefaultPath

// runner is what Shell and Exec share: a sandbox, its workspace and the
// limits a command runs under.
type runner struct {
	sb   *corral.Sandbox
	ws   workspace
	opts Options
	// noWorkspace: the sandbox has none (corral.Config.NoWorkspace).
	noWorkspace bool
}

// dir resolves a call's working directory (see workspace.dir). A sandbox
// without a workspace takes none: its commands start in their private
// /tmp.
func (r *runner) dir(p string) (string, error) {
	if !r.noWorkspace {
		return r.ws.dir(p)
	}
	if p != "" {
		return "", &ArgError{Field: "working_dir", Value: p, Reason: "this sandbox has no workspace: commands start in their private /tmp; cd in the command instead"}
	}
	return "", nil
}

func newRunner(sb *corral.Sandbox, opts Options) (*runner, error) {
	if sb == nil {
		return nil, errors.New("tools: nil *corral.Sandbox")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if sb.NoWorkspace() {
		// Commands start in their private /tmp; there is no directory
		// of the host to keep working directories in.
		return &runner{sb: sb, opts: opts, noWorkspace: true}, nil
	}
	if sb.Workspace() == "" {
		return nil, errors.New("tools: the sandbox has no workspace; set corral.Config.Workspace")
	}
	ws, err := newWorkspace(sb.Workspace())
	if err != nil {
		return nil, err
	}
	// A workspace shown at a mount destination: working directories are
	// given and run there.
	if ws, err = ws.withView(sb.WorkspaceDir()); err != nil {
		return nil, err
	}
	// And further destinations (an agent's workspace at /agent, zones):
	// the model gives and sees paths there.
	ws = ws.withBinds(sb.Binds())
	return &runner{sb: sb, ws: ws, opts: opts}, nil
}

// invocation is one command to run.
type invocation struct {
	name    string
	args    []string
	dir     string // canonical, inside the workspace
	env     []string
	timeout time.Duration
	stdin   string
	limit   int // bytes of each stream kept; 0 means Options.MaxOutputBytes
}

// timeout turns a call's timeout_seconds into a duration within the limits.
func (r *runner) timeout(seconds int) (time.Duration, error) {
	if seconds == 0 {
		return r.opts.DefaultTimeout, nil
	}
	limit := int64(r.opts.MaxTimeout / time.Second)
	if seconds < 0 || int64(seconds) > limit {
		return 0, &ArgError{Field: "timeout_seconds", Value: strconv.Itoa(seconds),
			Reason: fmt.Sprintf("want 1 to %d", limit)}
	}
	return time.Duration(seconds) * time.Second, nil
}

// environ is the sandbox's default environment with extra set on top and the
// tools bin directory first on PATH.
func (r *runner) environ(base, extra []string) []string {
	env := slices.Clone(base)
	for _, kv := range extra {
		env = environ.Set(env, kv)
	}
	if r.opts.ToolsBin == "" {
		return env
	}
	path, ok := lookupEnv(env, "PATH")
	if !ok || path == "" {
		path = defaultPath
	}
	return environ.Set(env, "PATH="+r.opts.ToolsBin+":"+path)
}

// run runs inv in the sandbox. The timeout is a context on the command, so
// when it fires the sandbox's init is killed and with it every process the
// command started.
func (r *runner) run(ctx context.Context, inv invocation) (*ShellOutput, error) {
	tctx, cancel := context.WithTimeoutCause(ctx, inv.timeout, errTimedOut)
	defer cancel()
	cmd := r.sb.Command(tctx, inv.name, inv.args...)
	cmd.Dir = r.ws.out(inv.dir)
	cmd.Env = r.environ(cmd.Environ(), inv.env)
	limit := r.opts.MaxOutputBytes
	if inv.limit > 0 {
		limit = inv.limit
	}
	stdout, stderr := newCapture(limit), newCapture(limit)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if inv.stdin != "" {
		cmd.Stdin = strings.NewReader(inv.stdin)
	}
	// The model acts on what it is told was refused: without it, "Read-only
	// file system" sends it looking for a way around the sandbox.
	cmd.ReportWrites = true
	start := time.Now()
	err := cmd.Run()
	out := &ShellOutput{Timeout: inv.timeout, Duration: time.Since(start)}
	out.Stdout, out.StdoutCut = stdout.result()
	out.Stderr, out.StderrCut = stderr.result()
	out.Refused = corral.Summary(cmd.Report())
	if err := exitStatus(tctx, ctx, out, err); err != nil {
		return nil, err
	}
	return out, nil
}

// exitStatus fills in how the command ended. It returns an error only when
// there is no output to report: the command never started, or the caller
// gave up on it.
func exitStatus(tctx, parent context.Context, out *ShellOutput, err error) error {
	var ee *corral.ExitError
	switch {
	case err == nil:
		out.Success = true
		return nil
	case parent.Err() != nil:
		return fmt.Errorf("command cancelled: %w", parent.Err())
	case errors.Is(context.Cause(tctx), errTimedOut):
		out.TimedOut, out.ExitCode = true, -1
		return nil
	case errors.As(err, &ee):
		out.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.Signal = "signal " + ws.Signal().String()
		}
		return nil
	}
	return err
}

func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}
