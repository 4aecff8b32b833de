package cli

import (
	"context"
	"github.com/corralhq/corral/browser"
	"time"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/tools"
	"github.com/corralhq/corral/zones"
)

// MCPServer is what `corral mcp`'s flags and configuration make of a
// server: the sandbox its tools run in and what the configuration says of
// the tools. corral-mcp serves it (package mcpserve).
type MCPServer struct {
	Sandbox *corral.Sandbox
	// Policy filters the tools offered.
	Policy tools.Policy
	// ReadOnly offers no tool that writes files.
	ReadOnly bool
	// Timeout is the default timeout of a command (--timeout).
	Timeout time.Duration
	// Changeset is the changeset directory the changes tool shows, or "".
	Changeset string
	// Zones, when not nil, is what the file tools act on: the agent's
	// zones, instead of the workspace.
	Zones *zones.Access
	// Version is the server's version, reported to clients.
	Version string
	// HTTP is the loopback address to serve the streamable HTTP transport
	// on, or "" for stdio.
	HTTP string
	// Secrets are the sandbox's secrets, for the leak guard to know their
	// values (mcpserver.Options.Secrets).
	Secrets []corral.Secret
	// Browser, when set (--browser), offers the browser tools.
	Browser *browser.Lazy
}

// Serve serves s until the client disconnects or ctx is done. An error made
// with Exit carries its exit status; any other is a usage error.
type Serve func(ctx context.Context, s *MCPServer) error

// Exit statuses a Serve may return with Exit.
const (
	ExitUsage = exitUsage
	ExitSetup = exitSetup
)

// Exit returns an error that ends the command with status code, printing
// msg, when not empty, as one "corral: ..." line.
func Exit(code int, msg string) error { return &exitError{code: code, msg: msg} }

// MCPMain runs corral-mcp: `corral mcp` with args (without the program
// name), served by serve. It returns the exit status. Call corral.Init
// first.
func MCPMain(args []string, serve Serve) int {
	cmd := newMCPCmd(serve, nil)
	cmd.Use = "corral-mcp [flags]"
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	return exitCode(cmd.Execute())
}
