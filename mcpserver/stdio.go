package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxLine is the longest line StdioTransport takes as a message.
const DefaultMaxLine = mcp.DefaultMaxLineLength

// StdioTransport serves newline-delimited JSON-RPC, as the SDK's stdio
// transport does, with one difference: a line that is no message (not
// JSON, nested deeper than a decoder goes, an id that is neither a string
// nor a number, a batch, longer than MaxLine) gets a JSON-RPC error with a
// null id and is skipped. The SDK's transport ends the session there,
// which cancels every call in flight: one bad line from a client would
// kill the commands the others are waiting for.
type StdioTransport struct {
	// Reader and Writer are the input and output; NewStdioTransport's are
	// the process's stdin and stdout.
	Reader io.ReadCloser
	Writer io.Writer
	// MaxLine is the longest line taken, in bytes; 0 is DefaultMaxLine.
	MaxLine int
}

// NewStdioTransport returns a StdioTransport on stdin and stdout.
func NewStdioTransport() *StdioTransport {
	return &StdioTransport{Reader: os.Stdin, Writer: os.Stdout}
}

// Connect starts reading the input.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	max := t.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	c := &lineConn{r: t.Reader, w: t.Writer, in: make(chan readResult), closed: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(t.Reader, 64<<10), max)
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// lineConn is one session over a StdioTransport.
type lineConn struct {
	r         io.ReadCloser
	w         io.Writer
	wmu       sync.Mutex
	in        chan readResult
	closed    chan struct{}
	closeOnce sync.Once
}

// readLoop passes each message on, answers each line that is none, and
// ends with the input's error (io.EOF at its end).
func (c *lineConn) readLoop(br *bufio.Reader, max int) {
	for {
		line, tooLong, err := readLine(br, max)
		switch {
		case tooLong:
			c.reject(jsonrpc.CodeParseError, fmt.Sprintf("line longer than %d bytes: not read", max))
		case len(bytes.TrimSpace(line)) > 0:
			if msg, bad := decode(line); bad != nil {
				c.reject(bad.Code, bad.Message)
			} else if !c.pass(readResult{msg: msg}) {
				return
			}
		}
		if err != nil {
			c.pass(readResult{err: err})
			return
		}
	}
}

// pass hands r to Read, or reports that the connection is closed.
func (c *lineConn) pass(r readResult) bool {
	select {
	case c.in <- r:
		return true
	case <-c.closed:
		return false
	}
}

// decode reads one line as a message, or says why it is none.
func decode(line []byte) (jsonrpc.Message, *jsonrpc.Error) {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: not one JSON value (or nested too deep)"}
	}
	if line[0] == '[' {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: batches are not served; send one message a line"}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + err.Error()}
	}
	return msg, nil
}

// readLine reads up to the next newline. A line longer than max is read
// to its end and dropped: tooLong says so.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// reject answers a line that is no message.
func (c *lineConn) reject(code int64, msg string) {
	b, _ := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, &jsonrpc.Error{Code: code, Message: msg}})
	c.writeLine(b)
}

func (c *lineConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(b, '\n'))
	return err
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case r := <-c.in:
		return r.msg, r.err
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.r.Close()
	})
	return nil
}

func (c *lineConn) SessionID() string { return "" }
