package mcpserver

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/fuzzseed"
)

// TestFuzzSeeds records the lines the MCP SDK's own client sends in a
// session (initialize, tools/list, tools/call of shell and read_file) as
// seed inputs of FuzzMCP (scripts/fuzz-corpus.sh).
func TestFuzzSeeds(t *testing.T) {
	fuzzseed.Enabled(t)
	sb, err := corral.New(corral.Config{Workspace: t.TempDir(), Env: []string{"PATH=" + testPath}})
	require.NoError(t, err)
	defer sb.Close()
	srv, err := New(sb, Options{})
	require.NoError(t, err)
	toServer, clientOut := io.Pipe()
	clientIn, fromServer := io.Pipe()
	var sent lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, &StdioTransport{Reader: toServer, Writer: fromServer}) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: nopCloser{io.MultiWriter(clientOut, &sent)}}, nil)
	require.NoError(t, err)
	_, err = cs.ListTools(ctx, nil)
	require.NoError(t, err)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": "echo hi; ls /nonexistent"}})
	require.NoError(t, err)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "missing.txt"}})
	require.NoError(t, err)
	cs.Close()
	session := sent.Bytes()
	fuzzseed.Write(t, "FuzzMCP", "go-sdk-session", session)
	for i, line := range bytes.SplitAfter(session, []byte("\n")) {
		if len(line) > 0 {
			fuzzseed.Write(t, "FuzzMCP", "go-sdk-line-"+string(rune('a'+i)), line)
		}
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
