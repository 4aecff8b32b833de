package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/config"
	"github.com/corralhq/corral/mcpserver"
	"github.com/corralhq/corral/tools"
	"github.com/corralhq/corral/zones"
)

// mcpFlags are `corral mcp`'s own flags, besides the run flags.
type mcpFlags struct {
	http     string
	readOnly bool
	session  string // --session: the agent's session, through the agent runtime
}

func newMCPCmd() *cobra.Command {
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
authentication of its own.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCP(cmd.Context(), &f, &m)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&m.http, "http", "", "serve the streamable HTTP transport on the loopback `ADDR` instead of stdio")
	cmd.Flags().BoolVar(&m.readOnly, "read-only-tools", false, "offer no tool that writes files (write_file, edit_file)")
	cmd.Flags().StringVar(&m.session, "session", "", "with --config: serve the agent's session `KEY` in the persistent sandbox the file's mode and scope give it")
	return cmd
}

func runMCP(ctx context.Context, f *runFlags, m *mcpFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	if err := mcpUsage(f, m); err != nil {
		return err
	}
	addr, err := loopbackAddr(m.http)
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
	srv, err := mcpserver.New(src.sb, mcpserver.Options{
		Policy:    src.policy,
		ReadOnly:  m.readOnly || src.readOnly,
		Tools:     tools.Options{DefaultTimeout: f.timeout},
		Changeset: src.changeset,
		Files:     src.files,
		Version:   versionString(),
	})
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	defer srv.Close()
	if addr != "" {
		return serveHTTP(ctx, srv, addr)
	}
	if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		return &exitError{code: 1, msg: "mcp: " + err.Error()}
	}
	return nil
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
	files     mcpserver.Files // the agent's zones, or nil for the workspace
	close     func()
}

// flagSandbox builds the sandbox of the run flags over --config's agent,
// with --scope's persistent state.
func flagSandbox(f *runFlags) (*mcpSandbox, error) {
	cfg, agent, err := mcpConfig(f)
	if err != nil {
		return nil, err
	}
	var policy tools.Policy
	access := config.AccessRW
	if agent != nil {
		policy, access = agentPolicy(*agent), agent.Sandbox.WorkspaceAccess
	}
	switch {
	case agent != nil && agent.Sandbox.Mode == corral.ModeDisabled:
		return nil, configUsageError("%s: agent %s runs unsandboxed (mode = %q); corral mcp serves only sandboxed tools", f.configFile, agent.ID, agent.Sandbox.Sessions)
	case access == config.AccessRO:
		// The agent's workspace is the model's to read, not to write: not
		// through the tools, nor through a command.
		cfg.ReadOnlyPaths = append(cfg.ReadOnlyPaths, cfg.Workspace)
	case access == config.AccessNone:
		return nil, configUsageError("%s: agent %s has workspace_access \"none\", which needs a workspace of its own: serve it with --session KEY", f.configFile, agent.ID)
	}
	var files mcpserver.Files
	if agent != nil && len(agent.Sandbox.Zones) > 0 {
		if cfg, files, err = withZones(cfg, f.configFile, agent.ID); err != nil {
			return nil, err
		}
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
	return &mcpSandbox{sb: sb, policy: policy, readOnly: access == config.AccessRO, changeset: cfg.Changeset,
		files: files, close: func() { sb.Close() }}, nil
}

// withZones shows the zones the agent declares to its commands, each at
// /NAME, and returns the file tools' view of them. A zone whose changes
// need review keeps commands' writes in cfg's changeset.
func withZones(cfg corral.Config, file, id string) (corral.Config, mcpserver.Files, error) {
	doc, err := config.Load(file)
	if err != nil {
		return cfg, nil, configUsageError("%v", err)
	}
	access, err := doc.Access(id)
	if err != nil {
		return cfg, nil, configUsageError("%s: agent %s: %v", file, id, err)
	}
	if cfg, err = access.SandboxConfig(cfg, doc.Zones, cfg.Changeset); err != nil {
		return cfg, nil, configUsageError("%s: agent %s: %v (--changeset DIR)", file, id, err)
	}
	// A file tool's change that a zone holds for approval is asked of the
	// client's user (MCP elicitation), or refused, saying why, when the
	// client cannot ask.
	return cfg, mcpserver.ZoneFiles(zones.NewFS(access, mcpserver.ElicitApprover())), nil
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

// serveHTTP serves srv on addr until ctx is done.
func serveHTTP(ctx context.Context, srv *mcpserver.Server, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &exitError{code: exitSetup, msg: fmt.Sprintf("--http %s: %v", addr, err)}
	}
	fmt.Fprintf(os.Stderr, "corral: serving MCP on http://%s\n", ln.Addr())
	hs := &http.Server{Handler: srv.Handler()}
	go func() {
		<-ctx.Done()
		srv.Close()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: 1, msg: "mcp: " + err.Error()}
	}
	return nil
}
