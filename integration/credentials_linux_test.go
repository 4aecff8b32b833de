//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// agentSecrets are files in the agents' own credential stores and in
// browser profiles, relative to a home: what a prompt-injected command
// reads first.
var agentSecrets = []string{
	".claude/.credentials.json",
	".codex/auth.json",
	".gemini/oauth_creds.json",
	".config/github-copilot/apps.json",
	".pgpass",
	".config/rclone/rclone.conf",
	".mozilla/firefox/abc.default-release/logins.json",
	".mozilla/firefox/abc.default-release/key4.db",
	"snap/firefox/common/.mozilla/firefox/abc.default/logins.json",
	".config/chromium/Default/Login Data",
	".config/chromium/Default/Cookies",
	".config/google-chrome/Default/Login Data",
}

// agentHome is a fake home, set as $HOME, holding each of agentSecrets and
// beside them an agent's ordinary settings, which stay readable.
func agentHome(t *testing.T) (home string, settings string) {
	home = filepath.Join(realDir(t), "home")
	for _, f := range agentSecrets {
		p := filepath.Join(home, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte("credential-"+f), 0o600))
	}
	settings = filepath.Join(home, ".claude", "settings.json")
	require.NoError(t, os.WriteFile(settings, []byte(`{"model":"x"}`), 0o644))
	t.Setenv("HOME", home)
	return home, settings
}

// The agents' tokens and the browsers' saved logins are hidden by default,
// the agents' other files stay readable, and Reveal shows a token again.
func TestAgentCredentialsAreHiddenByDefault(t *testing.T) {
	home, settings := agentHome(t)
	w := newWorld(t)
	cfg := w.config()
	cfg.ReadOnlyPaths = append(cfg.ReadOnlyPaths, home)
	for _, f := range agentSecrets {
		t.Run(f, func(t *testing.T) {
			p := filepath.Join(home, f)
			bare := w.bare(`cat "` + p + `"`)
			require.Equal(t, 0, bare.code, "the probe must work without the sandbox:\n%s", bare)
			require.Contains(t, bare.stdout, "credential-")

			r := w.sandboxed(cfg, `cat "`+p+`"`)
			assert.NotEqual(t, 0, r.code, "read a credential store:\n%s", r)
			assert.NotContains(t, r.stdout, "credential-")
		})
	}
	r := w.sandboxed(cfg, `cat "`+settings+`"`)
	assert.Equal(t, `{"model":"x"}`, r.stdout, "the agent's settings stay readable:\n%s", r)

	cfg.Reveal = []string{filepath.Join(home, ".claude/.credentials.json")}
	r = w.sandboxed(cfg, `cat "`+filepath.Join(home, ".claude/.credentials.json")+`"`)
	assert.Equal(t, "credential-.claude/.credentials.json", r.stdout, "Reveal shows it again:\n%s", r)
}

// In a home made writable on purpose, a token inside a directory the guard
// protects (.claude) stays hidden: the guard's read-only bind of the
// directory at command start does not show it again, and the directory
// cannot be moved aside to get at it.
func TestAgentCredentialsInsideAWritableHome(t *testing.T) {
	for _, script := range []string{
		`cat "$H/.claude/.credentials.json"`,
		`cat "$H/.codex/auth.json"`,
		`mv "$H/.codex" "$H/codex2" && cat "$H/codex2/auth.json"`,
		`cp -r "$H/.claude" "$H/c2" && cat "$H/c2/.credentials.json"`,
	} {
		t.Run(script, func(t *testing.T) {
			bareHome, _ := agentHome(t)
			w := newWorld(t)
			w.vars = append(w.vars, "H="+bareHome)
			bare := w.bare(script)
			require.Contains(t, bare.stdout, "credential-", "the probe must work without the sandbox:\n%s", bare)

			home, _ := agentHome(t)
			w = newWorld(t)
			w.vars = append(w.vars, "H="+home)
			r := w.sandboxed(corral.Config{Workspace: home, AllowHome: true}, script)
			assert.NotContains(t, r.stdout, "credential-", "reached a token inside the writable home:\n%s", r)
		})
	}
}
