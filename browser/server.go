package browser

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net"
	"net/http"
	"strings"

	"github.com/coder/websocket"
)

// maxMessage bounds one WebSocket message from a client (a screenshot
// travels the other way; a client's own messages are small, but scripts
// and files set through CDP need not be).
const maxMessage = 256 << 20

// server is the endpoint: http://127.0.0.1:PORT/TOKEN/...
type server struct {
	relay   *relay
	token   string
	id      string // the browser's id in its WebSocket path
	ln      net.Listener
	base    string // http://127.0.0.1:PORT/TOKEN
	wsBase  string // ws://127.0.0.1:PORT/TOKEN
	version json.RawMessage
	srv     *http.Server
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := s.authorized(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch rest = strings.TrimSuffix(rest, "/"); {
	case rest == "/json/version":
		s.serveVersion(w)
	case rest == "/json" || rest == "/json/list":
		s.serveList(w, r)
	case rest == "/json/new":
		s.serveNew(w, r)
	case rest == "/devtools/browser/"+s.id:
		s.serveSocket(w, r, "")
	case strings.HasPrefix(rest, "/devtools/page/"):
		s.serveSocket(w, r, strings.TrimPrefix(rest, "/devtools/page/"))
	default:
		http.NotFound(w, r)
	}
}

// authorized checks the token (the path's first element) and the Host
// header (a page in a browser of the host's, rebinding a name to
// 127.0.0.1, sends its own name), and returns the path after the token.
func (s *server) authorized(r *http.Request) (string, bool) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil || host != "127.0.0.1" && host != "localhost" {
		return "", false
	}
	tok, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) != 1 {
		return "", false
	}
	return "/" + rest, true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func (s *server) serveVersion(w http.ResponseWriter) {
	var v map[string]any
	json.Unmarshal(s.version, &v)
	out := map[string]any{
		"Browser":              v["product"],
		"Protocol-Version":     v["protocolVersion"],
		"User-Agent":           v["userAgent"],
		"V8-Version":           v["jsVersion"],
		"WebKit-Version":       v["revision"],
		"webSocketDebuggerUrl": s.wsBase + "/devtools/browser/" + s.id,
	}
	writeJSON(w, out)
}

// targetInfo is what Target.getTargets and getTargetInfo give of a target.
type targetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	Title    string `json:"title"`
	URL      string `json:"url"`
}

// listEntry is one target as /json/list gives it.
type listEntry struct {
	Description          string `json:"description"`
	ID                   string `json:"id"`
	Title                string `json:"title"`
	Type                 string `json:"type"`
	URL                  string `json:"url"`
	WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
}

func (s *server) entry(t targetInfo) listEntry {
	return listEntry{ID: t.TargetID, Title: t.Title, Type: t.Type, URL: t.URL,
		WebSocketDebuggerURL: s.wsBase + "/devtools/page/" + t.TargetID}
}

func (s *server) serveList(w http.ResponseWriter, r *http.Request) {
	ts, err := targets(r.Context(), s.relay)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out := []listEntry{}
	for _, t := range ts {
		if t.Type == "browser" || t.Type == "browser_ui" || t.Type == "tab" {
			continue // Chromium's own /json/list leaves them out too
		}
		out = append(out, s.entry(t))
	}
	writeJSON(w, out)
}

// targets lists the browser's targets.
func targets(ctx context.Context, r *relay) ([]targetInfo, error) {
	res, err := r.call(ctx, "", "Target.getTargets", struct{}{})
	if err != nil {
		return nil, err
	}
	var out struct {
		TargetInfos []targetInfo `json:"targetInfos"`
	}
	err = json.Unmarshal(res, &out)
	return out.TargetInfos, err
}

// serveNew opens a page at the query (/json/new?URL), about:blank without.
func (s *server) serveNew(w http.ResponseWriter, r *http.Request) {
	url := r.URL.RawQuery
	if url == "" {
		url = "about:blank"
	}
	res, err := s.relay.call(r.Context(), "", "Target.createTarget", map[string]string{"url": url})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	var created struct {
		TargetID string `json:"targetId"`
	}
	json.Unmarshal(res, &created)
	res, err = s.relay.call(r.Context(), "", "Target.getTargetInfo", map[string]string{"targetId": created.TargetID})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	var info struct {
		TargetInfo targetInfo `json:"targetInfo"`
	}
	json.Unmarshal(res, &info)
	writeJSON(w, s.entry(info.TargetInfo))
}

// serveSocket relays a WebSocket client: to a browser session of its own
// (target ""), or to the page target.
func (s *server) serveSocket(w http.ResponseWriter, r *http.Request, target string) {
	p, err := s.relay.attach(r.Context(), target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	defer s.relay.detach(p)
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(maxMessage)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		defer cancel()
		for {
			select {
			case b := <-p.out:
				if c.Write(ctx, websocket.MessageText, b) != nil {
					return
				}
			case <-p.gone:
				c.Close(websocket.StatusGoingAway, "target closed")
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		s.relay.fromPeer(p, b)
	}
}
