// Package mcpserve serves `corral mcp` for corral-mcp (cmd/corral-mcp): the
// MCP SDK's side of the command, over stdio or the streamable HTTP
// transport. Package cli turns the flags into a sandbox; this package is
// apart so that the corral binary, which does not import it, does not pay
// the SDK's start-up in every command.
package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/corralhq/corral/internal/cli"
	"github.com/corralhq/corral/mcpserver"
	"github.com/corralhq/corral/tools"
	"github.com/corralhq/corral/zones"
)

// Serve serves s: on stdio until end of file on stdin, or on s.HTTP until
// ctx is done.
func Serve(ctx context.Context, s *cli.MCPServer) error {
	var files mcpserver.Files
	if s.Zones != nil {
		// A file tool's change that a zone holds for approval is asked of
		// the client's user (MCP elicitation), or refused, saying why, when
		// the client cannot ask.
		files = mcpserver.ZoneFiles(zones.NewFS(s.Zones, mcpserver.ElicitApprover()))
	}
	srv, err := mcpserver.New(s.Sandbox, mcpserver.Options{
		Policy:    s.Policy,
		ReadOnly:  s.ReadOnly,
		Tools:     tools.Options{DefaultTimeout: s.Timeout},
		Changeset: s.Changeset,
		Files:     files,
		Version:   s.Version,
		Secrets:   s.Secrets,
		Browser:   s.Browser,
	})
	if err != nil {
		return cli.Exit(cli.ExitUsage, err.Error())
	}
	defer srv.Close()
	if s.HTTP != "" {
		return serveHTTP(ctx, srv, s.HTTP)
	}
	if err := srv.Run(ctx, mcpserver.NewStdioTransport()); err != nil && ctx.Err() == nil {
		return cli.Exit(1, "mcp: "+err.Error())
	}
	return nil
}

// serveHTTP serves srv on addr until ctx is done.
func serveHTTP(ctx context.Context, srv *mcpserver.Server, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return cli.Exit(cli.ExitSetup, fmt.Sprintf("--http %s: %v", addr, err))
	}
	fmt.Fprintf(os.Stderr, "corral: serving MCP on http://%s\n", ln.Addr())
	hs := &http.Server{Handler: srv.Handler()}
	go func() {
		<-ctx.Done()
		srv.Close()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return cli.Exit(1, "mcp: "+err.Error())
	}
	return nil
}
