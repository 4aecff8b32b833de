package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// MCP holds the figures of a shell call of `true` through corral's MCP
// server, client to result, measured alternating with library spawns of
// /bin/true.
type MCP struct {
	P50us int64 `json:"mcp_p50_us"`
	P90us int64 `json:"mcp_p90_us"`
	// LibraryP50us is the library's own spawn p50 from the same
	// alternating runs.
	LibraryP50us int64 `json:"mcp_library_p50_us"`
	// RatioP50 is P50us over LibraryP50us.
	RatioP50 float64 `json:"ratio_mcp_p50"`
}

// mcpProtocol is the protocol version the client asks for: the newest the
// official TypeScript SDK (which Claude Code and most clients use) speaks.
const mcpProtocol = "2025-11-25"

// mcpSettle is how long the client waits before a timed call, untimed, so
// that the server's sandbox has built its next init ahead, as the library's
// does before each of its timed spawns (Sandbox.Warm, which a client
// cannot call on a server's sandbox). The library's spawns wait as long
// after their Warm: the server builds its next init in its own process
// after each call, which would otherwise run during the library's next
// timed spawn.
const mcpSettle = 20 * time.Millisecond

// mcpShell calls the shell tool of a corral-mcp server it started, over
// stdio, as an agent's MCP client does: newline-delimited JSON-RPC on the
// server's standard input and output. The client is the few lines of JSON
// a call needs, so that the figure is the server's and not some client
// library's.
type mcpShell struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
}

// startMCP starts server (corral-mcp) serving the workspace ws, and
// initializes the session.
func startMCP(server, ws string) (*mcpShell, error) {
	cmd := exec.Command(server, "--workspace", ws)
	cmd.Dir = ws
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	m := &mcpShell{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	if err := m.initialize(); err != nil {
		m.close()
		if s := strings.TrimSpace(stderr.String()); s != "" {
			err = fmt.Errorf("%w: %s", err, s)
		}
		return nil, err
	}
	return m, nil
}

func (m *mcpShell) initialize() error {
	if _, err := m.call("initialize", map[string]any{
		"protocolVersion": mcpProtocol,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "corral-bench", "version": "0"},
	}); err != nil {
		return err
	}
	return m.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

// close ends the session (end of file on the server's input) and waits
// for the server to exit.
func (m *mcpShell) close() error {
	m.in.Close()
	return m.cmd.Wait()
}

func (m *mcpShell) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = m.in.Write(append(b, '\n'))
	return err
}

// rpcResponse is the part of a JSON-RPC response the client reads.
type rpcResponse struct {
	ID     *int            `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// call sends a request and returns its result, skipping the server's
// notifications and requests in between.
func (m *mcpShell) call(method string, params any) (json.RawMessage, error) {
	m.nextID++
	id := m.nextID
	if err := m.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		line, err := m.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: reading the response: %w", method, err)
		}
		var r rpcResponse
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		switch {
		case r.ID == nil || *r.ID != id:
			continue
		case r.Error != nil:
			return nil, fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		return r.Result, nil
	}
}

func (m *mcpShell) spawn(context.Context) error {
	raw, err := m.call("tools/call", map[string]any{"name": "shell", "arguments": map[string]any{"command": "true"}})
	if err != nil {
		return &SandboxError{Op: "mcp shell true", Err: err}
	}
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return &SandboxError{Op: "mcp shell true", Err: err}
	}
	if res.IsError {
		msg := "the shell call failed"
		if len(res.Content) > 0 {
			msg += ": " + res.Content[0].Text
		}
		return &SandboxError{Op: "mcp shell true", Err: errors.New(msg)}
	}
	return nil
}

func (m *mcpShell) warm(ctx context.Context) error { return settle(ctx) }

// settle waits mcpSettle.
func settle(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(mcpSettle):
		return nil
	}
}

// settledSandbox is the library's spawner with mcpSettle after its Warm.
type settledSandbox struct{ *sandbox }

func (s settledSandbox) warm(ctx context.Context) error {
	if err := s.sandbox.warm(ctx); err != nil {
		return err
	}
	return settle(ctx)
}

// checkMCPServer checks that the server VsMCP starts is there.
func checkMCPServer(path string) error {
	if path == "" {
		return errors.New("--vs-mcp: no corral-mcp to start")
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("--vs-mcp: the MCP server: %w", err)
	}
	return nil
}

// compareMCP times runs shell calls through the server alternating with
// library spawns.
func compareMCP(ctx context.Context, o Options, sb *sandbox) (*MCP, error) {
	m, err := startMCP(o.MCPServer, sb.sb.Workspace())
	if err != nil {
		return nil, &SandboxError{Op: "mcp server " + o.MCPServer, Err: err}
	}
	defer m.close()
	lib, calls, err := latencies(ctx, o.Runs, settledSandbox{sb}, m)
	if err != nil {
		return nil, err
	}
	l, c := summarize(lib), summarize(calls)
	r := &MCP{P50us: micros(c.P50), P90us: micros(c.P90), LibraryP50us: micros(l.P50)}
	r.RatioP50 = ratio(float64(r.P50us), float64(r.LibraryP50us))
	return r, nil
}
