package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/config"
)

// runFlags are the flags that describe a sandbox; `run` and `profile` share
// them.
type runFlags struct {
	workspace string
	writable  []string
	readOnly  []string
	hidden    []string
	reveal    []string
	protect   []string // --protect: names guarded besides the list
	allowHome bool
	network   string
	// allowDomain, denyDomain and allowIP are --net allow's lists.
	allowDomain []string
	denyDomain  []string
	allowIP     []string
	// hostPorts (--allow-host-port), publish and publishAny: the narrow
	// ways between the sandbox's loopback and the host's.
	hostPorts  []string
	publish    []string
	publishAny bool
	cwd        string
	env        []string
	timeout    time.Duration
	changeset  string
	// changesetWritable are writable paths whose writes go to the changeset.
	changesetWritable []string
	review            bool // run only: profile takes it so that command lines carry over
	// proxyConns is --proxy-connections as given; proxyConnections what
	// validate read from it (0: the default).
	proxyConns       string
	proxyConnections int
	// secret is --secret as given; secrets what validate read from it.
	secret  []string
	secrets []corral.Secret

	fallback  string
	unixSocks bool
	// limitValues are the limit flags as given, by limit; limits is what
	// validate read from them.
	limitValues map[corral.Limit]*string
	limits      corral.Limits
	// outliveParent keeps the command running when the process that
	// started the CLI dies (--no-die-with-parent).
	outliveParent bool
	// report is where --report writes the refusals as JSON lines: a file,
	// "-" for stderr, or "" for one summary line on stderr.
	report   string
	noReport bool // --no-report: no watch, no summary
	// reportReads (--report-reads) lists reads of hidden paths too.
	reportReads bool

	scope    string // --scope: a persistent home and /tmp (run only; see review)
	tty      *bool  // --tty as given (run only); nil: not given
	stateDir string // --state-dir, with --scope

	configFile string         // --config: see agentconfig.go
	agent      string         // --agent
	start      *config.Start  // what config() resolved of --config's agent
	cmd        *cobra.Command // to ask which flags were given
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.workspace, "workspace", "", "writable workspace directory `DIR` (default: the current directory)")
	fl.StringArrayVar(&f.writable, "writable", nil, "also make `PATH` writable (repeatable)")
	fl.StringArrayVar(&f.readOnly, "read-only", nil, "keep `PATH` read-only even under a writable parent (repeatable)")
	fl.StringArrayVar(&f.hidden, "hide", nil, "make `PATH` unreadable and unlistable (repeatable)")
	fl.StringArrayVar(&f.reveal, "reveal", nil, "leave the credential stores at or under `PATH` readable, which are hidden by default (repeatable; see 'corral profile')")
	fl.StringArrayVar(&f.protect, "protect", nil, "guard `NAME` in every writable root like the protected names (a plain name at any depth, tools/hooks at the top; repeatable; see 'corral profile')")
	fl.BoolVar(&f.allowHome, "allow-home", false, "let the workspace or a --writable path be your home directory or hold it")
	fl.StringVar(&f.network, "net", "host", "network: host, none, or allow (only --allow-domain names, through a proxy)")
	fl.StringArrayVar(&f.allowDomain, "allow-domain", nil, "with --net allow, let the command reach `NAME[:PORT]` (example.com, *.example.com; repeatable)")
	fl.StringArrayVar(&f.denyDomain, "deny-domain", nil, "with --net allow, refuse `NAME[:PORT]` even when allowed (repeatable)")
	fl.StringArrayVar(&f.allowIP, "allow-ip", nil, "with --net allow, let allowed names resolve into, and IP literals name, the range `CIDR` (private, loopback and other special-purpose ranges and the host's own addresses are refused otherwise; 127.0.0.1/32 opens every service on the host's loopback; repeatable)")
	fl.StringArrayVar(&f.hostPorts, "allow-host-port", nil, "with --net none or allow, let localhost:`PORT[/tcp]` inside reach the host's loopback service on PORT, and no other host port (repeatable)")
	fl.StringArrayVar(&f.publish, "publish", nil, "with --net none or allow, while the command runs, let the host's `[HOSTADDR:]HOSTPORT[:PORT]` (127.0.0.1 unless given) reach the command's server on PORT inside (repeatable)")
	fl.BoolVar(&f.publishAny, "publish-any", false, "let --publish listen on a host address other than loopback, where other machines may reach the command's server")
	fl.StringVar(&f.proxyConns, "proxy-connections", "",
		fmt.Sprintf("with --net allow, refuse connections through the proxy beyond `N` open at once (default %d; none for no limit)", corral.DefaultProxyConnections))
	fl.StringArrayVar(&f.secret, "secret", nil, "with --net allow, give the command a placeholder in the variable NAME and have the proxy add NAME's value (from your environment) to its requests to DOMAIN only: `NAME@DOMAIN[,DOMAIN...]` (repeatable; see 'corral profile')")
	fl.StringVar(&f.cwd, "cwd", "", "working directory `DIR` inside the sandbox (default: the workspace)")
	fl.StringArrayVar(&f.env, "env", nil, "set `KEY=VAL`, or pass the caller's KEY (repeatable)")
	fl.DurationVar(&f.timeout, "timeout", 0, "kill the sandbox after `DUR` (e.g. 30s, 5m)")
	fl.StringVar(&f.changeset, "changeset", "", "write workspace changes to the changeset `DIR` instead (see 'corral changes')")
	fl.StringArrayVar(&f.changesetWritable, "changeset-writable", nil,
		"also make `PATH` writable, its changes kept in the changeset like the workspace's (repeatable; needs --changeset)")
	// run only, like --review: profile takes them so that command lines
	// carry over, and creates no state.
	fl.StringVar(&f.scope, "scope", "", "keep a home (layered over yours, which is never written) and a /tmp that last across runs naming the same `KEY` (see 'corral sandboxes')")
	fl.StringVar(&f.stateDir, "state-dir", "", "with --scope: where the state lives, `DIR` (default: $XDG_STATE_HOME/corral)")
	fl.BoolVar(&f.review, "review", false, "after the command, review the changeset: show the diff, apply, save or discard it")
	fl.BoolVar(&f.unixSocks, "allow-unix-sockets", false, "let the command create unix domain sockets")
	fl.StringVar(&f.fallback, "fallback", "fail", "without every sandbox layer: fail, or warn and run on the best rung left")
	fl.BoolVar(&f.outliveParent, "no-die-with-parent", false,
		"keep the command running when the process that started corral dies (by default it is killed)")
	f.registerLimits(cmd)
	fl.StringVar(&f.report, "report", "", "write what the sandbox refused to `FILE` as JSON lines (- for stderr); without it, one summary line on stderr")
	fl.BoolVar(&f.noReport, "no-report", false, "do not watch the command's writes: no report and no summary line, and no cost per write call")
	fl.BoolVar(&f.reportReads, "report-reads", false, "also report reads of hidden paths (every open then waits for the sandbox's init: about twice the CPU of a command opening thousands of files)")
	f.registerConfig(cmd)
	// run's alone; profile takes them so that command lines carry over.
	fl.BoolP("tty", "t", false, "give the command a terminal of its own (a pseudo-terminal bridged to yours: job control, Ctrl-C, window size); the default when standard input, output and error are terminals; --tty=false turns it off")
	fl.BoolP("interactive", "i", true, "accepted for -it; the command always reads corral's standard input")
}

// validate catches flag values that are usage errors rather than sandbox
// set-up failures.
func (f *runFlags) validate() error {
	switch corral.Network(f.network) {
	case corral.NetworkHost, corral.NetworkNone, corral.NetworkAllow:
	default:
		return usageError("--net %q: want host, none or allow", f.network)
	}
	if f.timeout < 0 {
		return usageError("--timeout %s: must not be negative", f.timeout)
	}
	if f.noReport && (f.report != "" || f.reportReads) {
		return usageError("--report or --report-reads, and --no-report: choose one")
	}
	if f.fallback != string(corral.FallbackFail) && f.fallback != string(corral.FallbackWarn) {
		return usageError("--fallback %q: want fail or warn", f.fallback)
	}
	for _, kv := range f.env {
		if name, _, _ := strings.Cut(kv, "="); name == "" {
			return usageError("--env %q: want KEY or KEY=VALUE", kv)
		}
	}
	if f.given("proxy-connections") {
		n, err := corral.ParseProxyConnections(f.proxyConns)
		if err != nil {
			return usageError("--proxy-connections %q: %v", f.proxyConns, err)
		}
		f.proxyConnections = n
	}
	for _, p := range f.hostPorts {
		if _, err := corral.ParseHostPort(p); err != nil {
			return usageError("--allow-host-port %q: %v", p, err)
		}
	}
	if err := f.readLimits(); err != nil {
		return err
	}
	var err error
	if f.secrets, err = parseSecrets(f.secret); err != nil {
		return err
	}
	return f.validatePaths()
}

// validatePaths refuses empty path values. An empty --workspace in
// particular must not quietly become the current directory: that is how an
// unset variable in a script would make the wrong directory writable.
// needsChangeset refuses the flags that only make sense with a changeset
// when cfg (flags and config file together) has none.
func (f *runFlags) needsChangeset(cfg corral.Config) error {
	switch {
	case f.review && cfg.Changeset == "":
		return usageError("--review needs --changeset (or a changeset in --config)")
	case len(f.changesetWritable) > 0 && cfg.Changeset == "":
		return usageError("--changeset-writable needs --changeset (or a changeset in --config)")
	}
	return nil
}

func (f *runFlags) validatePaths() error {
	if f.given("workspace") && f.workspace == "" {
		return usageError("--workspace: empty path")
	}
	for _, l := range []struct {
		flag  string
		paths []string
	}{{"writable", f.writable}, {"read-only", f.readOnly}, {"hide", f.hidden}, {"reveal", f.reveal}} {
		if slices.Contains(l.paths, "") {
			return usageError("--%s: empty path", l.flag)
		}
	}
	return nil
}

// hostPortNumbers are --allow-host-port's ports, which validate checked.
func (f *runFlags) hostPortNumbers() []int {
	var out []int
	for _, p := range f.hostPorts {
		if n, err := corral.ParseHostPort(p); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// config turns the flags into a corral.Config.
func (f *runFlags) config() (corral.Config, error) {
	ws := f.workspace
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return corral.Config{}, err
		}
		ws = wd
	}
	return f.withConfigFile(corral.Config{
		Workspace:        ws,
		WritablePaths:    append(slices.Clone(f.writable), f.changesetWritable...),
		ReadOnlyPaths:    f.readOnly,
		HiddenPaths:      f.hidden,
		Reveal:           f.reveal,
		Protect:          f.protect,
		AllowHome:        f.allowHome,
		Network:          corral.Network(f.network),
		AllowedDomains:   f.allowDomain,
		DeniedDomains:    f.denyDomain,
		AllowedIPs:       f.allowIP,
		ProxyConnections: f.proxyConnections,
		HostPorts:        f.hostPortNumbers(),
		Publish:          f.publish,
		PublishAny:       f.publishAny,
		Secrets:          f.secrets,
		Env:              f.env,
		Changeset:        f.changeset,
		ChangesetPaths:   f.changesetWritable,
		DirectSpawn:      true,
		Fallback:         corral.Fallback(f.fallback),
		AllowUnixSockets: f.unixSocks,
		Limits:           f.limits,
		Logf:             say,
	})
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARG...]",
		Short: "Run a command inside the sandbox",
		Long: `Run CMD inside the sandbox: the host is read-only, the workspace and
--writable paths are writable, /tmp is private, --hide paths are unreadable.

Defaults to know: the network is the host's, unfiltered, unless --net none or
--net allow says otherwise; your home is read-only and /tmp starts empty at
every run, so caches (npm, pip, go) do not persist unless --scope KEY keeps a
home layered over yours and a /tmp across runs.

` + configHelp + `

Exit status: the command's own; 128+N when killed by signal N; 127 command not
found; 126 not executable; 125 the sandbox could not be set up; 2 usage error,
including a path or --cwd that does not exist or cannot be used.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			cfg, err := f.config()
			var ee *exitError
			switch {
			case errors.As(err, &ee):
				return err
			case err != nil:
				return &exitError{code: exitSetup, msg: err.Error()}
			}
			if err := f.needsChangeset(cfg); err != nil {
				return err
			}
			if cfg, err = f.withScope(cfg); err != nil {
				return err
			}
			if cmd.Flags().Changed("tty") {
				tty, _ := cmd.Flags().GetBool("tty")
				f.tty = &tty
			}
			err = runCommand(cfg, &f, args)
			if f.review {
				return reviewAfterRun(cfg.Changeset, err)
			}
			return err
		},
	}
	cmd.Flags().SetInterspersed(false)
	f.register(cmd)
	return cmd
}

func usageError(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// runCommand runs args in a sandbox made from cfg, in --cwd, killed after
// --timeout when it is not zero, and when the process that started the CLI
// dies unless --no-die-with-parent.
func runCommand(cfg corral.Config, f *runFlags, args []string) error {
	cwd, timeout := f.cwd, f.timeout
	// Descriptors the CLI inherited without close-on-exec are not the
	// command's: only its stdio reaches it. (The sandbox's init closes them
	// too; this covers the unsandboxed rung.)
	closeInherited()
	ctx := context.Background()
	if !f.outliveParent {
		var cancel context.CancelFunc
		var err error
		if ctx, cancel, err = withParent(ctx); err != nil {
			return notStarted(&exitError{code: exitSetup, msg: err.Error()})
		}
		defer cancel()
	}
	report, err := openReport(f.report)
	if err != nil {
		return notStarted(err)
	}
	defer report.Close()
	cfg.Report = !f.noReport
	cfg.ReportReads = f.reportReads
	sb, err := corral.New(withInitHelper(cfg))
	if err != nil {
		return notStarted(f.configFailure(err))
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	c := sb.Command(ctx, args[0], args[1:]...)
	c.Dir = cwd
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	var tty *ttyBridge
	if wantsTTY(f.tty) {
		c.Stdin, c.Stdout, c.Stderr, c.Terminal = nil, nil, nil, true
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGWINCH, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(signals)
	if err := c.Start(); err != nil {
		return notStarted(startError(err, cwd))
	}
	if c.Terminal {
		if tty, err = bridgeTTY(c.TerminalFile()); err != nil {
			c.Process.Kill()
			c.Wait()
			c.TerminalFile().Close()
			return &exitError{code: exitSetup, msg: err.Error()}
		}
	}
	go func() {
		for sig := range signals {
			if sig == syscall.SIGWINCH && tty != nil {
				tty.resize() // the kernel tells the command's foreground job
				continue
			}
			c.Process.Signal(sig)
		}
	}()
	err = c.Wait()
	if tty != nil {
		tty.finish()
	}
	if errors.Is(context.Cause(ctx), errParentDied) {
		return &exitError{code: 128 + int(syscall.SIGKILL)} // nobody is left to read a message
	}
	for _, d := range c.Dropped() {
		say("corral: dropped %s", d+droppedAllow(c.Report(), d))
	}
	for _, v := range c.LimitsHit() {
		say("corral: hit the %s limit (%s)", v.Target, v.Rule)
	}
	if werr := report.write(c.Report()); werr != nil {
		say("corral: --report: %v", werr)
	}
	if !f.noReport {
		keepLastReport(c.Report())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		say("corral: timed out after %s", timeout)
	}
	return exitStatus(c, err)
}

// startError maps a failure to start onto the contract's exit statuses. A
// --cwd that is not a directory inside the sandbox is a usage error.
func startError(err error, cwd string) error {
	var ee *corral.ExecError
	var se *corral.SetupError
	switch {
	case cwd != "" && errors.As(err, &se) && se.Layer == corral.LayerWorkdir:
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--cwd %s: %v", cwd, se.Err)}
	case errors.Is(err, corral.ErrNotFound):
		return &exitError{code: exitNotFound, msg: err.Error()}
	case errors.Is(err, corral.ErrNotExecutable):
		return &exitError{code: exitNotExecutable, msg: err.Error()}
	case errors.As(err, &ee):
		return &exitError{code: exitNotExecutable, msg: err.Error()}
	}
	return &exitError{code: exitSetup, msg: err.Error()}
}

// exitStatus is the command's own status, or 128+N for signal N.
func exitStatus(c *corral.Cmd, err error) error {
	st := c.ProcessState
	if st == nil {
		if err == nil {
			return nil
		}
		var se *corral.SetupError
		if errors.As(err, &se) {
			return &exitError{code: exitSetup, msg: err.Error()}
		}
		// Killed before a status arrived (timeout or cancellation).
		return &exitError{code: 128 + int(syscall.SIGKILL)}
	}
	ws := st.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		return &exitError{code: 128 + int(ws.Signal())}
	case ws.ExitStatus() != 0:
		return &exitError{code: ws.ExitStatus()}
	}
	return nil
}
