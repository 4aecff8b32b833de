package mcpserver

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralhq/corral"
)

// BenchmarkStdioCallOverhead times what the server side of a tools/call
// costs over pipes, as corral-mcp serves one: the client is raw JSON-RPC
// lines (no SDK), and the shell call's command is refused before anything
// runs, so the figure is the SDK's transport and dispatch, the leak guard
// and this package's argument checks.
func BenchmarkStdioCallOverhead(b *testing.B) {
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
	toServer, clientOut, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	clientIn, fromServer, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, &mcp.IOTransport{Reader: toServer, Writer: fromServer}) }()
	defer func() { clientOut.Close(); cancel(); <-done }()
	in := bufio.NewReader(clientIn)
	send := func(line string) {
		if _, err := clientOut.WriteString(line + "\n"); err != nil {
			b.Fatal(err)
		}
	}
	recv := func() {
		if _, err := in.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b.ReportAllocs()
	id := 0
	for b.Loop() {
		id++
		send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"shell","arguments":{"command":" "}}}`)
		recv()
	}
}
