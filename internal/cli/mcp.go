package cli

import (
	"context"
	"errors"
	"net"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/browser"
	"github.com/corralhq/corral/config"
	"github.com/corralhq/corral/tools"
	"github.com/corralhq/corral/zones"
)

// mcpFlags are `corral mcp`'s own flags, besides the run flags.
type mcpFlags struct {
	http     string
	readOnly bool
	session  string // --session: the agent's session, through the agent runtime
	browser  bool   // --browser: offer the browser tools
}

// newMCPCmd is `corral mcp`. With serve nil (the corral binary, which does
// not link the MCP SDK) it runs corral-mcp beside it with args, the
// arguments after mcp, once the flags are checked.
func newMCPCmd(serve Serve, args func() []string) *cobra.Command {
	var f runFlags
	var m mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "Serve the sandboxed tools to an agent over MCP (stdio)",
		Long: `Serve corral's tools over the Model Context Protocol on stdin and stdout, for
an agent that takes tools from MCP servers (Claude Code, Codex, Cursor...):
shell, exec, read_file, write_file, edit_file, list_files, and changes when a
changeset is configured. Every command and file operation runs in one sandbox,
built from the same flags as 'corral run'. The server exits at end of file on
stdin, killing every command it started.

` + configHelp + `
The agent's [agents.tools] allow and deny lists (over [defaults.tools]) choose
the tools offered. An agent whose workspace_access is "ro" is offered no tool
that writes files, and its commands cannot write the workspace either; with
"none" it needs --session. --timeout is the default timeout of a command.

With --scope KEY the sandbox keeps a home and a /tmp across servers and runs
naming the same KEY, as 'corral run --scope' does. With --config and
--session KEY the sandbox is the agent's session KEY as the agent runtime
gives it: the file's mode, scope and workspace_access decide which
persistent sandbox serves it (the agent's own, the session's or the shared
one) and what it sees of the workspace ("ro": its own workspace, the
agent's read-only at /agent; "none": its own only). The sandbox then comes
from the file alone: only --workspace (the agent's, when the file names
none), --state-dir and --timeout may be given with it. A session the file
leaves unsandboxed (mode "off", or the main session under "non-main") is
refused.

With --http ADDR the server speaks the streamable HTTP transport on ADDR
instead of stdio, until interrupted; ADDR must be a loopback address
(127.0.0.1:PORT, [::1]:PORT or localhost:PORT): the server has no
authentication of its own.

The server is corral-mcp, a binary of its own that 'corral mcp' runs with
the same arguments: it must lie beside corral ('make build' builds both,
'go install github.com/corralhq/corral/cmd/...@latest' installs both), and
not under the workspace or a writable path, where a command could replace
it. corral-mcp takes the same flags when a client starts it directly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if serve == nil {
				return execMCP(&f, &m, args())
			}
			return runMCP(cmd.Context(), &f, &m, serve)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&m.http, "http", "", "serve the streamable HTTP transport on the loopback `ADDR` instead of stdio")
	cmd.Flags().BoolVar(&m.readOnly, "read-only-tools", false, "offer no tool that writes files (write_file, edit_file)")
	cmd.Flags().StringVar(&m.session, "session", "", "with --config: serve the agent's session `KEY` in the persistent sandbox the file's mode and scope give it")
	cmd.Flags().BoolVar(&m.browser, "browser", false, "also offer browser tools (navigate, snapshot, screenshot, click, type) driving Chromium headless in a sandbox of its own, started at the first call (see 'corral browser')")
	return cmd
}

// checkMCP checks the flags, and returns --http's address.
func checkMCP(f *runFlags, m *mcpFlags) (string, error) {
	if err := f.validate(); err != nil {
		return "", err
	}
	if err := mcpUsage(f, m); err != nil {
		return "", err
	}
	return loopbackAddr(m.http)
}

func runMCP(ctx context.Context, f *runFlags, m *mcpFlags, serve Serve) error {
	addr, err := checkMCP(f, m)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	var src *mcpSandbox
	if m.session != "" {
		src, err = sessionSandbox(f, m.session)
	} else {
		src, err = flagSandbox(f)
	}
	if err != nil {
		return err
	}
	defer src.close()
	var lazy *browser.Lazy
	if m.browser {
		lazy = mcpBrowser(f, src)
		defer lazy.Close()
	}
	return serve(ctx, &MCPServer{
		Browser:   lazy,
		Sandbox:   src.sb,
		Policy:    src.policy,
		ReadOnly:  m.readOnly || src.readOnly,
		Timeout:   f.timeout,
		Changeset: src.changeset,
		Zones:     src.zones,
		Version:   versionString(),
		HTTP:      addr,
		Secrets:   src.secrets,
	})
}

// mcpUsage refuses the run flags that mean nothing to a server.
func mcpUsage(f *runFlags, m *mcpFlags) error {
	switch {
	case f.review:
		return usageError("--review: not for mcp; review the changeset with 'corral changes'")
	case f.cwd != "":
		return usageError("--cwd: not for mcp; each call gives its working_dir")
	case f.report != "" || f.noReport || f.reportReads:
		return usageError("--report, --no-report, --report-reads: not for mcp; each call's result says what the sandbox refused")
	case f.outliveParent:
		return usageError("--no-die-with-parent: not for mcp; the server kills every command it started when it exits")
	case m.session != "":
		return sessionUsage(f)
	}
	return nil
}

// mcpSandbox is the sandbox a server runs its tools in, and what the
// configuration says of the tools.
type mcpSandbox struct {
	sb        *corral.Sandbox
	policy    tools.Policy
	readOnly  bool // the workspace is the model's to read only
	changeset string
	zones     *zones.Access // the agent's zones, or nil for the workspace
	close     func()
	secrets   []corral.Secret // for the leak guard
	// cfg is the sandbox's configuration, which the browser's starts
	// from; browser, when set, starts the browser instead (a session's).
	cfg     corral.Config
	browser func(context.Context) (*browser.Browser, error)
}

// mcpBrowser is the browser of --browser: Chromium in a sandbox made like
// the tools' one, but, unless --net was given, with --net allow: no name
// is reachable unless --allow-domain allows it.
func mcpBrowser(f *runFlags, src *mcpSandbox) *browser.Lazy {
	if src.browser != nil {
		return browser.NewLazy(src.browser)
	}
	cfg := src.cfg
	if !f.given("net") && (f.configFile == "" || cfg.Network == "" || cfg.Network == corral.NetworkHost) {
		cfg.Network = corral.NetworkAllow
	}
	return browser.NewLazy(func(context.Context) (*browser.Browser, error) {
		return browser.Launch(context.Background(), cfg, browser.Options{})
	})
}

// flagSandbox builds the sandbox of the run flags over --config's agent,
// with --scope's persistent state. The agent's workspace_access and zones
// were resolved with the rest of its table (runFlags.applyAgent).
func flagSandbox(f *runFlags) (*mcpSandbox, error) {
	cfg, agent, err := mcpConfig(f)
	if err != nil {
		return nil, err
	}
	var policy tools.Policy
	var readOnly bool
	var files *zones.Access
	if agent != nil {
		if agent.Sandbox.Mode == corral.ModeDisabled {
			return nil, configUsageError("%s: agent %s runs unsandboxed (mode = %q); corral mcp serves only sandboxed tools", f.configFile, agent.ID, agent.Sandbox.Sessions)
		}
		policy, readOnly, files = agentPolicy(*agent), f.start.ReadOnly, f.start.Zones
	}
	if cfg, err = f.withScope(cfg); err != nil {
		return nil, err
	}
	// After the scope: corral-init must not lie in its state either.
	cfg = withInitHelper(cfg)
	closeInherited()
	sb, err := corral.New(cfg)
	if err != nil {
		return nil, f.configFailure(err)
	}
	return &mcpSandbox{sb: sb, policy: policy, readOnly: readOnly, changeset: cfg.Changeset,
		zones: files, close: func() { sb.Close() }, secrets: cfg.Secrets, cfg: cfg}, nil
}

// mcpConfig is the sandbox of the run flags and --config, and --config's
// agent (nil without --config).
func mcpConfig(f *runFlags) (corral.Config, *config.Agent, error) {
	cfg, err := f.config()
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return cfg, nil, err
	case err != nil:
		return cfg, nil, &exitError{code: exitSetup, msg: err.Error()}
	}
	if err := f.needsChangeset(cfg); err != nil {
		return cfg, nil, err
	}
	// A server lives long and spawns often: the helper keeps sandboxes
	// built ahead, as for any library caller.
	cfg.DirectSpawn = false
	if f.configFile == "" {
		return cfg, nil, nil
	}
	agent, err := loadAgent(f.configFile, f.agent)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, &agent, nil
}

// agentPolicy is the tool policy of the agent's [agents.tools].
func agentPolicy(a config.Agent) tools.Policy {
	return tools.Policy{Allow: a.Tools.Allow, Deny: a.Tools.Deny}
}

// loopbackAddr checks --http: empty, or a host:port whose host is a
// loopback address or "localhost" (served on 127.0.0.1).
func loopbackAddr(addr string) (string, error) {
	if addr == "" {
		return "", nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usageError("--http %q: want HOST:PORT with a loopback HOST, e.g. 127.0.0.1:8765", addr)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return "", usageError("--http %q: %q is not a loopback address; the server has no authentication, so it listens only on 127.0.0.1, ::1 or localhost", addr, host)
	}
	return net.JoinHostPort(host, port), nil
}
