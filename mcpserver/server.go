package mcpserver

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/browser"
	"github.com/corralhq/corral/tools"
)

// Options configures a Server. The zero value offers every tool.
type Options struct {
	// Policy filters the tools offered: a tool it does not allow is
	// neither listed nor callable.
	Policy tools.Policy
	// ReadOnly offers no tool that writes files (write_file, edit_file),
	// as an agent with workspace_access = "ro" gets. Commands run by shell
	// and exec still write where the sandbox lets them.
	ReadOnly bool
	// Tools sets the timeouts, output caps and tools bin directory of
	// shell and exec.
	Tools tools.Options
	// Files, when set, is what the file tools act on instead of the
	// sandbox's workspace: ZoneFiles for an agent's zones.
	Files Files
	// Changeset is the changeset directory the sandbox writes to
	// (corral.Config.Changeset), which the changes tool shows; empty
	// offers no changes tool.
	Changeset string
	// Version is reported to clients as the server's version.
	Version string
	// Secrets are the values of the sandbox's corral.Config.Secrets: the
	// leak guard finds them in any shape, and leaves the sandbox's
	// placeholders for them alone.
	Secrets []corral.Secret
	// Browser, when set, offers the browser tools (browser_navigate,
	// browser_snapshot, browser_screenshot, browser_click, browser_type),
	// which drive its page: a browser in a sandbox of its own (package
	// browser), started at the first call.
	Browser *browser.Lazy
	// URLChecker checks the URLs browser_navigate is given (tools'
	// SSRF rules); nil means the default one.
	URLChecker *tools.URLChecker
}

// Names of the tools a Server can offer.
const (
	ToolShell     = "shell"
	ToolExec      = "exec"
	ToolReadFile  = "read_file"
	ToolWriteFile = "write_file"
	ToolEditFile  = "edit_file"
	ToolListFiles = "list_files"
	ToolChanges   = "changes"

	ToolBrowserNavigate   = "browser_navigate"
	ToolBrowserSnapshot   = "browser_snapshot"
	ToolBrowserScreenshot = "browser_screenshot"
	ToolBrowserClick      = "browser_click"
	ToolBrowserType       = "browser_type"
)

// writingTools are the tools Options.ReadOnly removes.
var writingTools = []string{ToolWriteFile, ToolEditFile}

// Server is an MCP server of one sandbox's tools.
type Server struct {
	mcp       *mcp.Server
	shell     *tools.Shell
	exec      *tools.Exec
	files     Files
	zones     bool // files are an agent's zones: paths are /NAME/...
	changeset string
	browser   *browser.Lazy
	urls      *tools.URLChecker
	salt      []byte // keys the questions ElicitApprover asks
	names     []string

	// life is cancelled by Close: every call's context ends with it.
	life   context.Context
	cancel context.CancelFunc
	mu     sync.Mutex // guards closed against calls.Add racing Close's Wait
	closed bool
	calls  sync.WaitGroup
}

// New returns a Server running its tools in sb. The caller keeps
// ownership of sb: close it after the Server.
func New(sb *corral.Sandbox, opts Options) (*Server, error) {
	if err := opts.Policy.Validate(); err != nil {
		return nil, err
	}
	s := &Server{changeset: opts.Changeset, browser: opts.Browser, urls: opts.URLChecker, salt: newSalt()}
	if s.urls == nil {
		s.urls = &tools.URLChecker{}
	}
	var err error
	if s.shell, err = tools.NewShell(sb, opts.Tools); err != nil {
		return nil, err
	}
	if s.exec, err = tools.NewExec(sb, opts.Tools); err != nil {
		return nil, err
	}
	s.files, s.zones = opts.Files, opts.Files != nil
	if s.files == nil {
		if s.files, err = tools.NewSandboxFile(sb); err != nil {
			return nil, err
		}
	}
	s.life, s.cancel = context.WithCancel(context.Background())
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "corral", Title: "corral sandboxed tools", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Capabilities: &mcp.ServerCapabilities{}})
	s.mcp.AddReceivingMiddleware(leakGuard(known(sb, opts.Secrets)))
	for _, t := range s.catalog() {
		if !s.offers(t.name, opts) {
			continue
		}
		t.add(s.mcp)
		s.names = append(s.names, t.name)
	}
	return s, nil
}

func (s *Server) offers(name string, opts Options) bool {
	switch {
	case !opts.Policy.Allows(name):
		return false
	case opts.ReadOnly && slices.Contains(writingTools, name):
		return false
	case name == ToolChanges && s.changeset == "":
		return false
	case strings.HasPrefix(name, "browser_") && s.browser == nil:
		return false
	}
	return true
}

// Tools returns the names of the tools offered, in the order listed.
func (s *Server) Tools() []string { return slices.Clone(s.names) }

// MCP returns the underlying SDK server, for transports this package does
// not wrap.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one session on t until the client disconnects (for stdio,
// end of file on stdin) or ctx is done, then cancels every call still
// running and waits for them to end.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	// The SDK's Run waits for the calls in flight before it returns, so
	// the end of the input, or of ctx, must cancel them first: a read of
	// stdin that closing it does not interrupt would otherwise wait for a
	// call that waits for its command.
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()
	err := s.mcp.Run(ctx, &endTransport{Transport: t, end: s.cancel})
	s.Close()
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// Handler serves the streamable HTTP transport. It adds no
// authentication: serve it on loopback only. Requests from a browser page
// of another origin, and requests to a loopback address under another host
// name (DNS rebinding), are refused.
func (s *Server) Handler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, nil)
	return http.NewCrossOriginProtection().Handler(h)
}

// Close cancels every call still running, which kills their sandboxes,
// and waits for them to return. Later calls fail at once.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.calls.Wait()
	return nil
}

// call derives a call's context: it ends when the client cancels the call
// or the Server closes. done must be called when the call returns.
func (s *Server) call(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		cancel()
		return ctx, func() {}
	}
	s.calls.Add(1)
	stop := context.AfterFunc(s.life, cancel)
	return ctx, func() {
		stop()
		cancel()
		s.calls.Done()
	}
}

const instructions = `Tools of corral, a kernel-enforced sandbox. Commands and file operations run confined to the workspace: the rest of the host is read-only, credential stores are hidden, and nothing a command starts outlives it. When the sandbox refuses something, the result says so; do not try to work around it (copying elsewhere, another tool): ask the user instead.`

// endTransport calls end once its connection can read no more (for stdio,
// end of file on stdin).
type endTransport struct {
	mcp.Transport
	end func()
}

func (t *endTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &endConn{Connection: c, end: t.end}, nil
}

// SupportsProtocolVersion passes the wrapped transport's answer on.
func (t *endTransport) SupportsProtocolVersion(v string) bool {
	if p, ok := t.Transport.(mcp.ProtocolVersionSupporter); ok {
		return p.SupportsProtocolVersion(v)
	}
	return true
}

type endConn struct {
	mcp.Connection
	end func()
}

func (c *endConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		c.end()
	}
	return m, err
}
