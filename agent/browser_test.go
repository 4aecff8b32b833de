package agent

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/browser"
)

// A session's browser serves its endpoint, is shared by the session's
// sandbox, and ends with the Runtime.
func TestSessionBrowser(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		t.Skip(err.Error())
	}
	s := newScene(t)
	rt := s.runtime(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \"none\"\n")
	sess, err := rt.Session("a", "s1")
	require.NoError(t, err)
	b, err := sess.Browser(t.Context())
	require.NoError(t, err)
	resp, err := http.Get(b.Endpoint() + "/json/version")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	again, err := rt.Session("a", "s1")
	require.NoError(t, err)
	b2, err := again.Browser(t.Context())
	require.NoError(t, err)
	assert.Same(t, b, b2)

	require.NoError(t, rt.Close())
	<-b.Done() // ends with the Runtime
}

// An unsandboxed session has no sandboxed browser.
func TestSessionBrowserUnsandboxed(t *testing.T) {
	s := newScene(t)
	rt := s.runtime(t, "[[agents]]\nid = \"a\"\nmain_session = \"main\"\n[agents.sandbox]\nmode = \"non-main\"\n")
	sess, err := rt.Session("a", "main")
	require.NoError(t, err)
	_, err = sess.Browser(t.Context())
	assert.ErrorContains(t, err, "unsandboxed")
}
