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
)

// mcpFlags are `corral mcp`'s own flags, besides the run flags.
type mcpFlags struct {
	http     string
	readOnly bool
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
the tools offered. --timeout is the default timeout of a command.

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
	return cmd
}

func runMCP(ctx context.Context, f *runFlags, m *mcpFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	switch {
	case f.review:
		return usageError("--review: not for mcp; review the changeset with 'corral changes'")
	case f.cwd != "":
		return usageError("--cwd: not for mcp; each call gives its working_dir")
	}
	addr, err := loopbackAddr(m.http)
	if err != nil {
		return err
	}
	cfg, policy, err := mcpConfig(f)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	closeInherited()
	sb, err := corral.New(cfg)
	if err != nil {
		return f.configFailure(err)
	}
	defer sb.Close()
	srv, err := mcpserver.New(sb, mcpserver.Options{
		Policy:    policy,
		ReadOnly:  m.readOnly,
		Tools:     tools.Options{DefaultTimeout: f.timeout},
		Changeset: cfg.Changeset,
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

// mcpConfig is the sandbox of the run flags and --config, and the tool
// policy of --config's agent.
func mcpConfig(f *runFlags) (corral.Config, tools.Policy, error) {
	cfg, err := f.config()
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return cfg, tools.Policy{}, err
	case err != nil:
		return cfg, tools.Policy{}, &exitError{code: exitSetup, msg: err.Error()}
	}
	if err := f.needsChangeset(cfg); err != nil {
		return cfg, tools.Policy{}, err
	}
	// A server lives long and spawns often: the helper keeps sandboxes
	// built ahead, as for any library caller.
	cfg.DirectSpawn = false
	cfg = withInitHelper(cfg)
	var policy tools.Policy
	if f.configFile != "" {
		agent, err := loadAgent(f.configFile, f.agent)
		if err != nil {
			return cfg, policy, err
		}
		policy = tools.Policy{Allow: agent.Tools.Allow, Deny: agent.Tools.Deny}
		if agent.Sandbox.WorkspaceAccess == config.AccessRO {
			// The agent's workspace is the model's to read, not to write:
			// the tools that write are not offered.
			policy.Deny = append(policy.Deny, "write_file", "edit_file")
		}
	}
	return cfg, policy, nil
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
