package browser

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Page is one tab of a Browser driven by the caller itself (the MCP
// server's browser tools): navigate, read, screenshot, click, type. Its
// calls go over the pipe without a WebSocket. Calls are serialized.
type Page struct {
	b       *Browser
	mu      sync.Mutex
	session string
}

// NewPage opens a tab at about:blank.
func (b *Browser) NewPage(ctx context.Context) (*Page, error) {
	r := b.srv.relay
	res, err := r.call(ctx, "", "Target.createTarget", map[string]string{"url": "about:blank"})
	if err != nil {
		return nil, fmt.Errorf("browser: new page: %w", err)
	}
	var t struct {
		TargetID string `json:"targetId"`
	}
	json.Unmarshal(res, &t)
	res, err = r.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true})
	if err != nil {
		return nil, fmt.Errorf("browser: new page: %w", err)
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &s)
	return &Page{b: b, session: s.SessionID}, nil
}

func (p *Page) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return p.b.srv.relay.call(ctx, p.session, method, params)
}

// loadedJS waits for the document to have loaded.
const loadedJS = `new Promise(r => document.readyState === "complete" ? r(true) : addEventListener("load", () => r(true)))`

// Navigate loads url and waits for the page to load. A network error (a
// name the sandbox's policy does not allow among them) is an error.
func (p *Page) Navigate(ctx context.Context, url string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	res, err := p.call(ctx, "Page.navigate", map[string]string{"url": url})
	if err != nil {
		return fmt.Errorf("navigate %s: %w", url, err)
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	json.Unmarshal(res, &nav)
	if nav.ErrorText != "" {
		return fmt.Errorf("navigate %s: %s", url, nav.ErrorText)
	}
	_, err = p.eval(ctx, loadedJS)
	return err
}

// eval evaluates expr in the page (awaiting a promise) and returns its
// value; an exception is an error.
func (p *Page) eval(ctx context.Context, expr string) (any, error) {
	res, err := p.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
	if err != nil {
		return nil, err
	}
	var out struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, err
	}
	if e := out.Exception; e != nil {
		if e.Exception.Description != "" {
			return nil, errors.New(e.Exception.Description)
		}
		return nil, errors.New(e.Text)
	}
	return out.Result.Value, nil
}

// Snapshot is the page's title, URL and visible text.
type Snapshot struct {
	Title, URL, Text string
}

// Snapshot reads the page's title, URL and visible text (innerText).
func (p *Page) Snapshot(ctx context.Context) (Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, err := p.eval(ctx, `JSON.stringify({Title: document.title, URL: location.href, Text: document.body ? document.body.innerText : ""})`)
	if err != nil {
		return Snapshot{}, err
	}
	var s Snapshot
	str, _ := v.(string)
	err = json.Unmarshal([]byte(str), &s)
	return s, err
}

// Screenshot returns a PNG of the page's viewport.
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	res, err := p.call(ctx, "Page.captureScreenshot", map[string]string{"format": "png"})
	if err != nil {
		return nil, err
	}
	var out struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(out.Data)
}

// element finds selector's first element and runs body on it as el.
func (p *Page) element(ctx context.Context, selector, body string) error {
	sel, _ := json.Marshal(selector)
	_, err := p.eval(ctx, fmt.Sprintf(`(() => { const el = document.querySelector(%s); if (!el) throw new Error("no element matches " + %s); el.scrollIntoView({block: "center"}); %s; return true })()`, sel, sel, body))
	return err
}

// Click clicks the first element selector (CSS) matches.
func (p *Page) Click(ctx context.Context, selector string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.element(ctx, selector, "el.click()")
}

// Type focuses the first element selector matches and types text into
// it, as keyboard input.
func (p *Page) Type(ctx context.Context, selector, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.element(ctx, selector, "el.focus()"); err != nil {
		return err
	}
	_, err := p.call(ctx, "Input.insertText", map[string]string{"text": text})
	return err
}

// Lazy starts a browser at its first use and keeps one page of it: what
// the MCP server's tools drive. A browser that ended is started again at
// the next use.
type Lazy struct {
	launch func(context.Context) (*Browser, error)

	mu   sync.Mutex
	b    *Browser
	page *Page
}

// NewLazy returns a Lazy that starts its browser with launch, which is
// given the first call's context to wait on but must not end the browser
// with it: the browser lives until Close.
func NewLazy(launch func(context.Context) (*Browser, error)) *Lazy { return &Lazy{launch: launch} }

// Page returns the page, starting the browser when needed.
func (l *Lazy) Page(ctx context.Context) (*Page, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b != nil {
		select {
		case <-l.b.Done():
			l.b.Close()
			l.b, l.page = nil, nil
		default:
			return l.page, nil
		}
	}
	b, err := l.launch(ctx)
	if err != nil {
		return nil, err
	}
	page, err := b.NewPage(ctx)
	if err != nil {
		b.Close()
		return nil, err
	}
	l.b, l.page = b, page
	return page, nil
}

// Close ends the browser, if one runs.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b != nil {
		l.b.Close()
		l.b, l.page = nil, nil
	}
	return nil
}
