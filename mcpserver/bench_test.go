package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralhq/corral"
)

// BenchmarkCallOverhead times a tools/call through the SDK's client and
// this server over the in-memory transport, without a command: a shell
// call whose command is refused before anything runs. It is what a call
// costs on top of its sandbox's spawn (see corral bench --vs-mcp).
func BenchmarkCallOverhead(b *testing.B) {
	sb, err := corral.New(corral.Config{Workspace: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	srv, err := New(sb, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"command": " "}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolShell, Arguments: args})
		if err != nil || !res.IsError {
			b.Fatal(err, res)
		}
	}
}
