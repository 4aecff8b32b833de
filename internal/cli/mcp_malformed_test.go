package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPMalformedInput: a line that is no message (not JSON, an object
// id, nesting deeper than 10,000 levels, a 20 MiB line, a batch) gets a
// JSON-RPC error with a null id, and the server goes on: a call in flight
// meanwhile finishes, and the next calls are served.
func TestMCPMalformedInput(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	c := exec.Command(mcpCLI(t), "mcp", "--workspace", ws)
	c.Env = append(os.Environ(), cliEnv+"=1")
	c.Dir = ws
	c.Stderr = os.Stderr
	stdin, err := c.StdinPipe()
	require.NoError(t, err)
	stdout, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })

	// The client's lines and the test's go to the server's stdin one
	// whole line at a time; the server's answers to lines that are no
	// message (id null) come to the test, the rest to the client.
	var wmu sync.Mutex
	in := writerFunc(func(b []byte) (int, error) {
		wmu.Lock()
		defer wmu.Unlock()
		return stdin.Write(b)
	})
	toClient, fromServer := io.Pipe()
	rejected := make(chan map[string]any, 16)
	go func() {
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var m map[string]any
				if json.Unmarshal(line, &m) == nil && m["id"] == nil && m["error"] != nil {
					rejected <- m
				} else {
					fromServer.Write(line)
				}
			}
			if err != nil {
				fromServer.CloseWithError(err)
				close(rejected) // the server is gone
				return
			}
		}
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "malformed-test", Version: "0"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: toClient, Writer: nopWriteCloser{in}}, nil)
	require.NoError(t, err)

	inFlight := make(chan string, 1)
	go func() {
		inFlight <- shellCall(t, cs, "while [ ! -e go ]; do sleep 0.05; done; echo survived")
	}()

	deep := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`
	huge := `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"` + strings.Repeat("A", 20<<20) + `"}}`
	for _, tc := range []struct {
		name, line string
		code       float64
	}{
		{"not JSON", "this is not json", -32700},
		{"truncated", `{"jsonrpc":"2.0","id":3,"method":`, -32700},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
		{"deep nesting", deep, -32700},
		{"20 MiB line", huge, -32700},
		{"batch", `[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, -32600},
		{"a number", `42`, -32600},
	} {
		_, err := in.Write([]byte(tc.line + "\n"))
		require.NoError(t, err, tc.name)
		m, ok := <-rejected
		require.True(t, ok, "%s: the server exited", tc.name)
		e, _ := m["error"].(map[string]any)
		require.NotNil(t, e, tc.name)
		assert.Equal(t, tc.code, e["code"], "%s: %v", tc.name, e["message"])
	}

	require.NoError(t, os.WriteFile(filepath.Join(ws, "go"), nil, 0o644))
	assert.Contains(t, <-inFlight, "survived", "the call in flight was not cancelled")
	assert.Contains(t, shellCall(t, cs, "echo still serving"), "still serving")
	require.NoError(t, cs.Close())
	stdin.Close()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
