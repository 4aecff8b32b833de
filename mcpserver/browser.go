package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralhq/corral/tools"
)

type navigateIn struct {
	URL string `json:"url" jsonschema:"the http or https URL to load"`
}

type noIn struct{}

type clickIn struct {
	Selector string `json:"selector" jsonschema:"CSS selector of the element; the first match is used"`
}

type typeIn struct {
	Selector string `json:"selector" jsonschema:"CSS selector of the field; the first match is focused"`
	Text     string `json:"text" jsonschema:"the text to type into it"`
}

// maxSnapshot caps the text browser_snapshot returns.
const maxSnapshot = 64 << 10

// browserCatalog lists the browser tools.
func (s *Server) browserCatalog() []tool {
	return []tool{
		def(s, ToolBrowserNavigate, "Load a URL in the sandboxed browser's page and wait for it to load. Only http and https URLs of public hosts are taken, and the browser reaches only the names the sandbox's network policy allows: a refused name fails as a network error.", s.browserNavigate),
		def(s, ToolBrowserSnapshot, "Read the browser page's title, URL and visible text.", s.browserSnapshot),
		def(s, ToolBrowserScreenshot, "Take a PNG screenshot of the browser page's viewport.", s.browserScreenshot),
		def(s, ToolBrowserClick, "Click the first element of the browser page that a CSS selector matches.", s.browserClick),
		def(s, ToolBrowserType, "Type text into the first field of the browser page that a CSS selector matches.", s.browserType),
	}
}

func (s *Server) browserNavigate(ctx context.Context, in navigateIn) *mcp.CallToolResult {
	u, err := s.urls.Check(ctx, in.URL)
	if err != nil {
		return errorResult(err)
	}
	p, err := s.browser.Page(ctx)
	if err != nil {
		return errorResult(err)
	}
	if err := p.Navigate(ctx, u.String()); err != nil {
		return errorResult(err)
	}
	return s.browserSnapshot(ctx, noIn{})
}

func (s *Server) browserSnapshot(ctx context.Context, _ noIn) *mcp.CallToolResult {
	p, err := s.browser.Page(ctx)
	if err != nil {
		return errorResult(err)
	}
	snap, err := p.Snapshot(ctx)
	if err != nil {
		return errorResult(err)
	}
	out := tools.NewCapture(maxSnapshot)
	fmt.Fprintf(out, "Title: %s\nURL: %s\n\n%s", snap.Title, snap.URL, snap.Text)
	return textResult(out.String())
}

func (s *Server) browserScreenshot(ctx context.Context, _ noIn) *mcp.CallToolResult {
	p, err := s.browser.Page(ctx)
	if err != nil {
		return errorResult(err)
	}
	png, err := p.Screenshot(ctx)
	if err != nil {
		return errorResult(err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: png, MIMEType: "image/png"}}}
}

func (s *Server) browserClick(ctx context.Context, in clickIn) *mcp.CallToolResult {
	p, err := s.browser.Page(ctx)
	if err != nil {
		return errorResult(err)
	}
	if err := p.Click(ctx, in.Selector); err != nil {
		return errorResult(err)
	}
	return textResult("Clicked " + in.Selector + ".")
}

func (s *Server) browserType(ctx context.Context, in typeIn) *mcp.CallToolResult {
	p, err := s.browser.Page(ctx)
	if err != nil {
		return errorResult(err)
	}
	if err := p.Type(ctx, in.Selector, in.Text); err != nil {
		return errorResult(err)
	}
	return textResult(fmt.Sprintf("Typed %d characters into %s.", len(in.Text), in.Selector))
}
