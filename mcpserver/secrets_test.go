package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// With secrets, the leak guard knows their values and placeholders: the
// placeholder, shaped like a GitHub token, passes; the value, wherever a
// command finds it, is redacted, even in a shape of its own.
func TestLeakGuardKnowsSecrets(t *testing.T) {
	value := "ghp_" + strings.Repeat("Q7zK", 9)
	t.Setenv("MCP_TEST_TOKEN", value)
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	// How a value could reach the workspace: a file the user left there.
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("a\n"+value+"\nb\n"), 0o644))
	cfg := corral.Config{Workspace: ws, ReadOnlyPaths: []string{base}, Env: []string{"PATH=" + testPath},
		Network: corral.NetworkAllow, AllowedDomains: []string{"api.github.com"},
		Secrets: []corral.Secret{{Name: "MCP_TEST_TOKEN", Domains: []string{"api.github.com"}}}}
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	srv, err := New(sb, Options{Secrets: cfg.Secrets})
	require.NoError(t, err)
	cs := connect(t, srv)

	got, isErr := call(t, cs, "shell", map[string]any{"command": `printf '%s\n' "$MCP_TEST_TOKEN"`})
	assert.False(t, isErr, got)
	assert.Contains(t, got, sb.Secrets()[0].Placeholder)

	for _, cmd := range []string{"cat notes.txt", "od -An -c notes.txt | tr -d ' \\n'; echo", "rev notes.txt | rev"} {
		got, isErr = call(t, cs, "shell", map[string]any{"command": cmd})
		assert.NotContains(t, got, value, cmd)
		assert.True(t, isErr, cmd)
		assert.Contains(t, got, "redacted", cmd)
	}
}
