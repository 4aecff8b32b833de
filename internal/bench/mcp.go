package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/mcpserver"
)

// MCP holds the figures of a shell call of `true` through corral's MCP
// server, client to result, measured alternating with library spawns of
// /bin/true on the same sandbox.
type MCP struct {
	P50us int64 `json:"mcp_p50_us"`
	P90us int64 `json:"mcp_p90_us"`
	// LibraryP50us is the library's own spawn p50 from the same
	// alternating runs.
	LibraryP50us int64 `json:"mcp_library_p50_us"`
	// RatioP50 is P50us over LibraryP50us.
	RatioP50 float64 `json:"ratio_mcp_p50"`
}

// mcpShell calls the shell tool of a server on the sandbox, over the
// SDK's in-memory transport.
type mcpShell struct {
	sb *corral.Sandbox
	cs *mcp.ClientSession
}

func newMCPShell(ctx context.Context, sb *corral.Sandbox) (*mcpShell, func(), error) {
	srv, err := mcpserver.New(sb, mcpserver.Options{})
	if err != nil {
		return nil, nil, err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "corral-bench", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		srv.Close()
		return nil, nil, err
	}
	return &mcpShell{sb: sb, cs: cs}, func() { cs.Close(); ss.Close(); srv.Close() }, nil
}

func (m *mcpShell) spawn(ctx context.Context) error {
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolShell, Arguments: map[string]any{"command": "true"}})
	if err == nil && res.IsError {
		err = errors.New("the shell call failed")
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				err = fmt.Errorf("the shell call failed: %s", tc.Text)
			}
		}
	}
	if err != nil {
		return &SandboxError{Op: "mcp shell true", Err: err}
	}
	return nil
}

func (m *mcpShell) warm(ctx context.Context) error { return m.sb.Warm(ctx) }

// compareMCP times runs MCP shell calls alternating with library spawns.
func compareMCP(ctx context.Context, runs int, sb *sandbox) (*MCP, error) {
	m, closeMCP, err := newMCPShell(ctx, sb.sb)
	if err != nil {
		return nil, &SandboxError{Op: "mcp server", Err: err}
	}
	defer closeMCP()
	lib, calls, err := latencies(ctx, runs, sb, m)
	if err != nil {
		return nil, err
	}
	l, c := summarize(lib), summarize(calls)
	r := &MCP{P50us: micros(c.P50), P90us: micros(c.P90), LibraryP50us: micros(l.P50)}
	r.RatioP50 = ratio(float64(r.P50us), float64(r.LibraryP50us))
	return r, nil
}
