package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/config"
)

// An agent learns under its own settings: what it needs beyond them is
// learned, merged into its config file, and nothing of the run lands in
// its workspace.
func TestRuntimeLearn(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	s := newScene(t)
	doc := "[[agents]]\nid = \"coder\" # mine\n[agents.sandbox]\nnetwork = \"none\"\n"
	rt := s.runtime(t, doc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	learned, err := rt.Learn(ctx, "coder", "sh", "-c", `echo x > notes.md; curl -s --unix-socket /tmp/s http://x/; true`)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(s.ws, "notes.md"))
	require.NoError(t, err)
	assert.Equal(t, "agent notes\n", string(data), "the learning run's write did not land")
	merged, err := learned.MergeInto([]byte(doc), "coder")
	require.NoError(t, err)
	assert.Contains(t, string(merged), "id = \"coder\" # mine", "the file is kept")
	assert.Contains(t, string(merged), "allow_unix_sockets = true # learned: first socket(AF_UNIX) by curl")
	cfg, err := config.Parse(strings.NewReader(string(merged)), filepath.Join(s.dir, "agents.toml"))
	require.NoError(t, err, "%s", merged)
	a, _ := cfg.Agent("coder")
	assert.True(t, a.Sandbox.AllowUnixSockets)
}
