package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/tools"
)

// The lines a client opens a session with, in the form MCP clients send
// them (testdata/fuzz/FuzzMCP holds lines the SDK's own client wrote).
const (
	fuzzInit        = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"claude-code","version":"2.0.14"}}}`
	fuzzInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	fuzzProbe       = `{"jsonrpc":"2.0","id":"fuzz-probe","method":"ping"}`
)

// FuzzMCP serves a session whose input is any bytes, then a ping: the
// server answers the ping (no line, however malformed, ends the session
// or stalls it), every line it writes is JSON-RPC 2.0, and it ends when
// its input does.
func FuzzMCP(f *testing.F) {
	for _, lines := range [][]string{
		{fuzzInit, fuzzInitialized, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`},
		{fuzzInit, fuzzInitialized, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shell","arguments":{"command":"echo hi; exit 3"}}}`},
		{fuzzInit, fuzzInitialized, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"../../etc/passwd"}}}`},
		{fuzzInit, fuzzInitialized, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"exec","arguments":{"argv":["sleep","60"],"timeout":"1ms"}}}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{`, strings.Repeat("[", 20000), `{"jsonrpc":"2.0","id":1e999,"method":"ping"}`},
		{fuzzInit, fuzzInit, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file","arguments":{"path":".git/hooks/pre-commit","content":"x"}}}`},
	} {
		f.Add([]byte(strings.Join(lines, "\n") + "\n"))
	}
	ws := f.TempDir()
	base := filepath.Dir(ws)
	cfg := corral.Config{Workspace: ws, ReadOnlyPaths: []string{base}, Env: []string{"PATH=" + testPath}}
	sandboxtest.Require(f, cfg)
	sb, err := corral.New(cfg)
	require.NoError(f, err)
	f.Cleanup(func() { sb.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		srv, err := New(sb, Options{Tools: tools.Options{DefaultTimeout: 2 * time.Second}})
		require.NoError(t, err)
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- srv.Run(context.Background(), &StdioTransport{Reader: inR, Writer: outW})
			outW.Close()
		}()
		go func() {
			inW.Write(data)
			inW.Write([]byte("\n" + fuzzProbe + "\n"))
		}()
		answered := make(chan bool, 1)
		scanned := make(chan struct{})
		go func() {
			defer close(scanned)
			probed := false
			sc := bufio.NewScanner(outR)
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				var msg struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
				}
				if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
					t.Errorf("the server wrote %q, not JSON-RPC 2.0", sc.Bytes())
				}
				if string(msg.ID) == `"fuzz-probe"` && !probed {
					probed = true
					answered <- true
				}
			}
			if !probed {
				answered <- false
			}
		}()
		select {
		case ok := <-answered:
			require.True(t, ok, "the session ended before the ping after %q", data)
		case <-time.After(60 * time.Second):
			t.Fatalf("no answer to a ping after %q", data)
		}
		inW.Close()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("the session did not end with its input after %q", data)
		}
		<-scanned
	})
}
