package mcpserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/browser"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/internal/testhook"
	"github.com/corralhq/corral/tools"
)

// publicResolver gives the test names a public address, as a real DNS
// would give a real site's: the SSRF check lets them through, and the
// sandbox's proxy (testhook's resolver) takes them to the page server.
type publicResolver struct{}

func (publicResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(host, ".test") {
		return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

const pageHTML = `<title>form page</title><p>some text</p>
<input id="name"><button id="go" onclick="document.title = 'hello ' + document.getElementById('name').value">go</button>`

// The browser tools drive a sandboxed browser: an allowed page loads, is
// read, typed into, clicked and shot; a name the policy does not allow is
// a network error; the SSRF rules refuse a loopback address and file://
// before the browser sees them.
func TestBrowserTools(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		t.Skip(err.Error())
	}
	l, err := net.Listen("tcp4", "127.0.0.2:0")
	if err != nil {
		t.Skip("cannot listen on 127.0.0.2: " + err.Error())
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, pageHTML)
	}))
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	port := l.Addr().(*net.TCPAddr).Port
	t.Cleanup(testhook.SetResolver(func(_ context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
	}))

	h := newHost(t, false)
	cfg := corral.Config{Workspace: h.ws, Network: corral.NetworkAllow, AllowedDomains: []string{"allowed.test"}, AllowedIPs: []string{"127.0.0.2/32"}}
	sandboxtest.Require(t, cfg)
	lazy := browser.NewLazy(func(context.Context) (*browser.Browser, error) {
		return browser.Launch(context.Background(), cfg, browser.Options{})
	})
	t.Cleanup(func() { lazy.Close() })
	_, cs := newServer(t, h, Options{Browser: lazy, URLChecker: &tools.URLChecker{Resolver: publicResolver{}}})
	assert.Contains(t, listNames(t, cs), ToolBrowserNavigate)

	got, isErr := call(t, cs, ToolBrowserNavigate, map[string]any{"url": fmt.Sprintf("http://allowed.test:%d/", port)})
	require.False(t, isErr, got)
	assert.Contains(t, got, "Title: form page")
	assert.Contains(t, got, "some text")

	got, isErr = call(t, cs, ToolBrowserType, map[string]any{"selector": "#name", "text": "corral"})
	require.False(t, isErr, got)
	got, isErr = call(t, cs, ToolBrowserClick, map[string]any{"selector": "#go"})
	require.False(t, isErr, got)
	got, _ = call(t, cs, ToolBrowserSnapshot, nil)
	assert.Contains(t, got, "Title: hello corral")

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolBrowserScreenshot})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	img, ok := res.Content[0].(*mcp.ImageContent)
	require.True(t, ok)
	assert.Equal(t, "PNG", string(img.Data[1:4]))

	got, isErr = call(t, cs, ToolBrowserNavigate, map[string]any{"url": fmt.Sprintf("http://other.test:%d/", port)})
	assert.True(t, isErr)
	assert.Contains(t, got, "net::ERR_")

	for _, u := range []string{fmt.Sprintf("http://127.0.0.2:%d/", port), "file:///etc/passwd"} {
		got, isErr = call(t, cs, ToolBrowserNavigate, map[string]any{"url": u})
		assert.True(t, isErr, u)
		assert.Contains(t, got, "refused", u)
	}
}

// Without Options.Browser, no browser tool is offered.
func TestNoBrowserTools(t *testing.T) {
	_, cs := newServer(t, newHost(t, false), Options{})
	for _, n := range listNames(t, cs) {
		assert.False(t, strings.HasPrefix(n, "browser_"), n)
	}
}
