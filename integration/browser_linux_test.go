//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/browser"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/internal/testhook"
)

// needsChromium skips t when no Chromium is installed (CI installs
// Debian's chromium).
func needsChromium(t *testing.T) {
	t.Helper()
	if _, err := browser.Find(); err != nil {
		t.Skip(err.Error())
	}
}

// launchBrowser starts a browser in a sandbox made from cfg, closed at the
// end of the test.
func launchBrowser(t *testing.T, cfg corral.Config) *browser.Browser {
	t.Helper()
	needsChromium(t)
	sandboxtest.Require(t, cfg)
	b, err := browser.Launch(t.Context(), cfg, browser.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// cdpClient is a minimal CDP client over the endpoint's browser WebSocket,
// one call at a time.
type cdpClient struct {
	t    *testing.T
	c    *websocket.Conn
	next int
}

func dialCDP(t *testing.T, endpoint string) *cdpClient {
	t.Helper()
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	getJSON(t, endpoint+"/json/version", &v)
	require.True(t, strings.HasPrefix(v.WS, "ws://127.0.0.1:"), v.WS)
	c, _, err := websocket.Dial(t.Context(), v.WS, nil)
	require.NoError(t, err)
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &cdpClient{t: t, c: c}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

// call sends method to session ("" for the browser) and returns the
// result, skipping the events that come first; a CDP error is returned.
func (c *cdpClient) call(session, method string, params any) (json.RawMessage, error) {
	c.t.Helper()
	c.next++
	msg := map[string]any{"id": c.next, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	require.NoError(c.t, c.c.Write(c.t.Context(), websocket.MessageText, b))
	for {
		_, b, err := c.c.Read(c.t.Context())
		require.NoError(c.t, err)
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		require.NoError(c.t, json.Unmarshal(b, &m))
		if m.ID != c.next {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error)
		}
		return m.Result, nil
	}
}

func (c *cdpClient) mustCall(session, method string, params any) json.RawMessage {
	c.t.Helper()
	res, err := c.call(session, method, params)
	require.NoError(c.t, err)
	return res
}

// openPage makes a page and attaches to it (flattened); it returns the
// session.
func (c *cdpClient) openPage() string {
	var created struct {
		TargetID string `json:"targetId"`
	}
	require.NoError(c.t, json.Unmarshal(c.mustCall("", "Target.createTarget", map[string]string{"url": "about:blank"}), &created))
	var att struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(c.t, json.Unmarshal(c.mustCall("", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}), &att))
	return att.SessionID
}

// navigate loads url in the page of session and returns Page.navigate's
// errorText ("" when the page loaded).
func (c *cdpClient) navigate(session, url string) string {
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	require.NoError(c.t, json.Unmarshal(c.mustCall(session, "Page.navigate", map[string]string{"url": url}), &nav))
	return nav.ErrorText
}

// eval returns the string an expression evaluates to in the page.
func (c *cdpClient) eval(session, expr string) string {
	var res struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	require.NoError(c.t, json.Unmarshal(c.mustCall(session, "Runtime.evaluate",
		map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}), &res))
	return fmt.Sprint(res.Result.Value)
}

// loaded waits, in the page, for its document to have loaded.
const loaded = `new Promise(r => document.readyState === "complete" ? r("complete") : addEventListener("load", () => r("complete")))`

// browserScene is a page server on egressAddr, which the proxy's resolver
// gives for the test names, and a sandbox config that allows only
// allowed.test.
func browserScene(t *testing.T) (port int, cfg corral.Config) {
	t.Helper()
	t.Cleanup(testhook.SetResolver(egressResolve))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<title>page of %s</title><p>hello</p>", r.Host)
	}))
	srv.Listener = listenEgress(t)
	srv.Start()
	t.Cleanup(srv.Close)
	return portOf(srv.Listener), corral.Config{Workspace: realDir(t), Network: corral.NetworkAllow,
		AllowedDomains: []string{"allowed.test"}, AllowedIPs: []string{egressAddr + "/32"}}
}

// An allowed page loads through the sandbox's proxy and its title is read
// through the endpoint; a name the policy does not allow is a network
// error in the page. Without the policy (the host's network, the same
// server reached by its address) the refused page's server is reachable:
// the refusal is the sandbox's.
func TestBrowserLoadsOnlyAllowedNames(t *testing.T) {
	port, cfg := browserScene(t)
	b := launchBrowser(t, cfg)
	c := dialCDP(t, b.Endpoint())
	s := c.openPage()
	c.mustCall(s, "Page.enable", struct{}{})

	assert.Empty(t, c.navigate(s, fmt.Sprintf("http://allowed.test:%d/", port)))
	c.eval(s, loaded)
	assert.Equal(t, "page of allowed.test:"+fmt.Sprint(port), c.eval(s, "document.title"))

	assert.Contains(t, c.navigate(s, fmt.Sprintf("http://other.test:%d/", port)), "net::ERR_", "a name not allowed is a network error")

	resp, err := http.Get(fmt.Sprintf("http://%s:%d/", egressAddr, port))
	require.NoError(t, err, "the refused name's server is up")
	resp.Body.Close()
}

// file:// shows what the sandbox shows: a hidden path's file is not there,
// while the same page in the workspace loads.
func TestBrowserFileURLOfHiddenPath(t *testing.T) {
	ws := realDir(t)
	secret := filepath.Join(realDir(t), "secret.html")
	shown := filepath.Join(ws, "shown.html")
	for _, p := range []string{secret, shown} {
		require.NoError(t, os.WriteFile(p, []byte("<title>secret title</title>"), 0o644))
	}
	cfg := corral.Config{Workspace: ws, Network: corral.NetworkNone, HiddenPaths: []string{filepath.Dir(secret)}}
	b := launchBrowser(t, cfg)
	c := dialCDP(t, b.Endpoint())
	s := c.openPage()
	c.mustCall(s, "Page.enable", struct{}{})
	page := "document.title + document.documentElement.outerHTML"

	c.navigate(s, "file://"+shown)
	c.eval(s, loaded)
	require.Contains(t, c.eval(s, page), "secret title", "file:// works for what the sandbox shows")

	c.navigate(s, "file://"+secret)
	c.eval(s, loaded)
	assert.NotContains(t, c.eval(s, page), "secret title")
}

// /json/list and /json/new work as Chromium's own do, and page WebSockets
// reach the page.
func TestBrowserJSONEndpoints(t *testing.T) {
	cfg := corral.Config{Workspace: realDir(t), Network: corral.NetworkNone}
	b := launchBrowser(t, cfg)
	var page struct {
		ID string `json:"id"`
		WS string `json:"webSocketDebuggerUrl"`
	}
	req, err := http.NewRequest(http.MethodPut, b.Endpoint()+"/json/new?data:text/html,<title>new%20one</title>", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	resp.Body.Close()
	require.NotEmpty(t, page.ID)

	var list []struct {
		ID, Type string
	}
	getJSON(t, b.Endpoint()+"/json/list", &list)
	ids := []string{}
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	assert.Contains(t, ids, page.ID)

	c, _, err := websocket.Dial(t.Context(), page.WS, nil)
	require.NoError(t, err)
	defer c.CloseNow()
	pc := &cdpClient{t: t, c: c}
	pc.eval("", loaded)
	assert.Equal(t, "new one", pc.eval("", "document.title"))

	// Without the token, nothing.
	u := strings.TrimSuffix(b.Endpoint(), "/"+filepath.Base(b.Endpoint())) + "/json/version"
	resp, err = http.Get(u)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}
