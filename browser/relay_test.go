package browser

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeChrome is the other end of a relay's pipe, played by the test.
type fakeChrome struct {
	t *testing.T
	r *bufio.Reader
	w *os.File
}

func newFake(t *testing.T) (*relay, *fakeChrome) {
	toChrome, ours, err := os.Pipe()
	require.NoError(t, err)
	theirs, fromChrome, err := os.Pipe()
	require.NoError(t, err)
	r := newRelay(newPipe(ours, theirs))
	go r.run()
	t.Cleanup(func() { fromChrome.Close(); ours.Close() })
	return r, &fakeChrome{t: t, r: bufio.NewReader(toChrome), w: fromChrome}
}

// read returns the next message the relay sent.
func (f *fakeChrome) read() message {
	b, err := f.r.ReadBytes(0)
	require.NoError(f.t, err)
	var m message
	require.NoError(f.t, json.Unmarshal(b[:len(b)-1], &m))
	return m
}

func (f *fakeChrome) write(v any) {
	b, err := json.Marshal(v)
	require.NoError(f.t, err)
	_, err = f.w.Write(append(b, 0))
	require.NoError(f.t, err)
}

// attach makes a peer whose browser session is session.
func (f *fakeChrome) attach(r *relay, session string) *peer {
	got := make(chan *peer)
	go func() {
		p, err := r.attach(context.Background(), "")
		assert.NoError(f.t, err)
		got <- p
	}()
	m := f.read()
	require.Equal(f.t, "Target.attachToBrowserTarget", m.Method)
	f.write(map[string]any{"id": json.RawMessage(m.ID), "result": map[string]string{"sessionId": session}})
	return <-got
}

func next(t *testing.T, p *peer) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(<-p.out, &m))
	return m
}

// Two clients share the pipe: the same id from each reaches Chromium as two
// ids in their own sessions and comes back to each under its own id; a
// session one attaches, and those attached within it, are its alone.
func TestRelayRoutesByOwner(t *testing.T) {
	r, f := newFake(t)
	a, b := f.attach(r, "A"), f.attach(r, "B")

	r.fromPeer(a, []byte(`{"id":1,"method":"Target.getTargets"}`))
	r.fromPeer(b, []byte(`{"id":1,"method":"Target.getTargets"}`))
	ma, mb := f.read(), f.read()
	assert.Equal(t, "A", ma.SessionID)
	assert.Equal(t, "B", mb.SessionID)
	assert.NotEqual(t, string(ma.ID), string(mb.ID))
	f.write(map[string]any{"id": json.RawMessage(mb.ID), "sessionId": "B", "result": map[string]string{"who": "b"}})
	f.write(map[string]any{"id": json.RawMessage(ma.ID), "sessionId": "A", "result": map[string]string{"who": "a"}})
	got := next(t, b)
	assert.Equal(t, map[string]any{"id": 1.0, "result": map[string]any{"who": "b"}}, got, "b's own id, without its session")
	assert.Equal(t, map[string]any{"id": 1.0, "result": map[string]any{"who": "a"}}, next(t, a))

	// a attaches to a page: the session is a's.
	r.fromPeer(a, []byte(`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"T","flatten":true}}`))
	m := f.read()
	f.write(map[string]any{"id": json.RawMessage(m.ID), "sessionId": "A", "result": map[string]string{"sessionId": "P"}})
	next(t, a)
	f.write(map[string]any{"method": "Page.loadEventFired", "sessionId": "P", "params": map[string]any{}})
	assert.Equal(t, "P", next(t, a)["sessionId"])

	// b may not use it.
	r.fromPeer(b, []byte(`{"id":3,"method":"Runtime.evaluate","sessionId":"P"}`))
	refused := next(t, b)
	assert.Equal(t, 3.0, refused["id"])
	assert.Contains(t, refused["error"], "message")

	// A session auto-attached within b's is b's.
	f.write(map[string]any{"method": "Target.attachedToTarget", "sessionId": "B", "params": map[string]any{"sessionId": "C"}})
	assert.Equal(t, "Target.attachedToTarget", next(t, b)["method"])
	f.write(map[string]any{"method": "Runtime.consoleAPICalled", "sessionId": "C", "params": map[string]any{}})
	assert.Equal(t, "C", next(t, b)["sessionId"])

	// When a's own session ends, a is dropped.
	f.write(map[string]any{"method": "Target.detachedFromTarget", "params": map[string]any{"sessionId": "A"}})
	<-a.gone
	assert.False(t, r.owns(b, "A"))
}

// Calls in flight fail, and peers are dropped, when the browser goes.
func TestRelayBrowserGone(t *testing.T) {
	r, f := newFake(t)
	a := f.attach(r, "A")
	done := make(chan error)
	go func() {
		_, err := r.call(context.Background(), "", "Browser.getVersion", struct{}{})
		done <- err
	}()
	f.read()
	f.w.Close()
	assert.ErrorIs(t, <-done, errClosed)
	<-a.gone
}
