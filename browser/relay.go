package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// message is one CDP message, in either direction. Fields are kept raw so
// that what the relay does not read passes through unchanged.
type message struct {
	ID        json.RawMessage `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
}

// callError is an error CDP answered a call with.
type callError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *callError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// errClosed is what calls get once the browser is gone.
var errClosed = errors.New("browser: the browser has exited")

// peer is a client of the relay: a WebSocket of the endpoint, or the relay
// itself for its own calls (nil peer).
type peer struct {
	// session is the CDP session the peer's messages without a sessionId
	// go to: its own browser session, or the page it connected to.
	session string
	out     chan []byte   // messages for the client, in order
	gone    chan struct{} // closed when the relay drops the peer
	once    sync.Once
}

func (p *peer) drop() { p.once.Do(func() { close(p.gone) }) }

// pending is a call in flight: whose, under which id it was sent, and,
// for the relay's own calls, where the answer goes.
type pending struct {
	peer   *peer
	id     json.RawMessage
	method string
	reply  chan message
}

// relay multiplexes the one pipe among its peers: it gives every call a
// fresh id, sends the answer back under the caller's id, and routes a
// session's events to the peer that owns the session.
type relay struct {
	pipe *pipe

	mu       sync.Mutex
	nextID   int64
	calls    map[int64]pending
	sessions map[string]*peer // every session a peer owns, by id
	closed   bool
}

func newRelay(p *pipe) *relay {
	return &relay{pipe: p, calls: map[int64]pending{}, sessions: map[string]*peer{}}
}

// run reads the pipe until it ends, then fails every call in flight and
// drops every peer.
func (r *relay) run() {
	for {
		b, err := r.pipe.recv()
		if err != nil {
			break
		}
		var m message
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		r.fromBrowser(m)
	}
	r.mu.Lock()
	r.closed = true
	calls, sessions := r.calls, r.sessions
	r.calls, r.sessions = map[int64]pending{}, map[string]*peer{}
	r.mu.Unlock()
	for _, c := range calls {
		if c.reply != nil {
			close(c.reply)
		}
	}
	for _, p := range sessions {
		p.drop()
	}
}

// call sends method to session ("" for the pipe's own) and waits for the
// answer.
func (r *relay) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	reply := make(chan message, 1)
	if err := r.send(pending{reply: reply, method: method}, message{Method: method, SessionID: session, Params: raw}); err != nil {
		return nil, err
	}
	select {
	case m, ok := <-reply:
		if !ok {
			return nil, errClosed
		}
		if m.Error != nil {
			ce := &callError{}
			json.Unmarshal(m.Error, ce)
			return nil, ce
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// send gives m a fresh id, records the call and writes it to the pipe.
func (r *relay) send(c pending, m message) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return errClosed
	}
	r.nextID++
	id := r.nextID
	r.calls[id] = c
	r.mu.Unlock()
	m.ID = json.RawMessage(fmt.Sprint(id))
	b, err := json.Marshal(m)
	if err == nil {
		err = r.pipe.send(b)
	}
	if err != nil {
		r.mu.Lock()
		delete(r.calls, id)
		r.mu.Unlock()
	}
	return err
}

// fromPeer sends a client's message on: to its own session unless it names
// one, which it must own.
func (r *relay) fromPeer(p *peer, b []byte) {
	var m message
	if err := json.Unmarshal(b, &m); err != nil || m.ID == nil || m.Method == "" {
		return // not a call: nothing to answer
	}
	if m.SessionID == "" {
		m.SessionID = p.session
	} else if !r.owns(p, m.SessionID) {
		r.answerError(p, m, "Session with given id not found.")
		return
	}
	if err := r.send(pending{peer: p, id: m.ID, method: m.Method}, message{Method: m.Method, SessionID: m.SessionID, Params: m.Params}); err != nil {
		r.answerError(p, m, err.Error())
	}
}

func (r *relay) owns(p *peer, session string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[session] == p
}

func (r *relay) answerError(p *peer, m message, text string) {
	e, _ := json.Marshal(callError{Code: -32001, Message: text})
	out := message{ID: m.ID, Error: e}
	if m.SessionID != p.session {
		out.SessionID = m.SessionID
	}
	r.deliver(p, out)
}

// fromBrowser routes one message of Chromium's.
func (r *relay) fromBrowser(m message) {
	if m.ID != nil {
		r.answer(m)
		return
	}
	r.event(m)
}

// answer routes a response to the call it answers, under the caller's id;
// a session the call attached to becomes the caller's.
func (r *relay) answer(m message) {
	var id int64
	if json.Unmarshal(m.ID, &id) != nil {
		return
	}
	r.mu.Lock()
	c, ok := r.calls[id]
	delete(r.calls, id)
	if ok && c.peer != nil && m.Error == nil && attaches(c.method) {
		var res struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(m.Result, &res) == nil && res.SessionID != "" {
			r.sessions[res.SessionID] = c.peer
		}
	}
	r.mu.Unlock()
	switch {
	case !ok:
	case c.reply != nil:
		c.reply <- m
	default:
		m.ID = c.id
		r.deliver(c.peer, m)
	}
}

func attaches(method string) bool {
	return method == "Target.attachToTarget" || method == "Target.attachToBrowserTarget"
}

// event routes an event to the owner of its session. A session attached
// within one belongs to the same owner; one that ends is forgotten, and a
// peer whose own session ended is dropped.
func (r *relay) event(m message) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if m.Method == "Target.attachedToTarget" || m.Method == "Target.detachedFromTarget" {
		json.Unmarshal(m.Params, &p)
	}
	r.mu.Lock()
	owner := r.sessions[m.SessionID]
	var ended *peer
	switch {
	case p.SessionID == "":
	case m.Method == "Target.attachedToTarget" && owner != nil:
		r.sessions[p.SessionID] = owner
	case m.Method == "Target.detachedFromTarget":
		if q := r.sessions[p.SessionID]; q != nil && q.session == p.SessionID {
			ended = q
		}
		delete(r.sessions, p.SessionID)
	}
	r.mu.Unlock()
	if ended != nil {
		ended.drop()
	}
	if owner != nil {
		r.deliver(owner, m)
	}
}

// deliver queues m for p, without the sessionId when it is p's own. A
// client that does not read holds the pipe once its queue is full, as a
// client of Chromium's own endpoint holds its connection.
func (r *relay) deliver(p *peer, m message) {
	if m.SessionID == p.session {
		m.SessionID = ""
	}
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	select {
	case p.out <- b:
	case <-p.gone:
	}
}

// attach makes a peer whose messages go to a new session: the browser's
// (target "") or a page's.
func (r *relay) attach(ctx context.Context, target string) (*peer, error) {
	var res json.RawMessage
	var err error
	if target == "" {
		res, err = r.call(ctx, "", "Target.attachToBrowserTarget", struct{}{})
	} else {
		res, err = r.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true})
	}
	if err != nil {
		return nil, err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &s); err != nil || s.SessionID == "" {
		return nil, fmt.Errorf("browser: no session in %s", res)
	}
	p := &peer{session: s.SessionID, out: make(chan []byte, 256), gone: make(chan struct{})}
	r.mu.Lock()
	r.sessions[s.SessionID] = p
	r.mu.Unlock()
	return p, nil
}

// detach forgets p's sessions and ends its own in Chromium, which ends
// those attached within it.
func (r *relay) detach(p *peer) {
	p.drop()
	r.mu.Lock()
	for id, q := range r.sessions {
		if q == p {
			delete(r.sessions, id)
		}
	}
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nobody waits for the answer
	r.call(ctx, "", "Target.detachFromTarget", map[string]string{"sessionId": p.session})
}
