package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

func TestSecretsFromEnvAndFile(t *testing.T) {
	t.Setenv("CONFIG_TEST_TOKEN", "ghp_fromtheenvironment0123456789abcdefgh")
	file := filepath.Join(t.TempDir(), "npm-token")
	require.NoError(t, os.WriteFile(file, []byte("npm_fromthefile0123456789abcdefghijklmn\n"), 0o600))
	cfg, err := Parse(strings.NewReader(`
[defaults.sandbox]
secrets = [{ name = "CONFIG_TEST_TOKEN", domains = ["api.github.com"] }]
[[agents]]
id = "a"
[agents.sandbox]
network = "allow"
secrets = [{ name = "NPM_TOKEN", domains = ["registry.npmjs.org", "*.npmjs.org"], from = "file:`+file+`", body = true }]
`), "agents.toml")
	require.NoError(t, err)
	a, ok := cfg.Agent("a")
	require.True(t, ok)
	assert.Equal(t, []corral.Secret{
		{Name: "CONFIG_TEST_TOKEN", Domains: []string{"api.github.com"}, Value: "ghp_fromtheenvironment0123456789abcdefgh"},
		{Name: "NPM_TOKEN", Domains: []string{"registry.npmjs.org", "*.npmjs.org"}, Value: "npm_fromthefile0123456789abcdefghijklmn", Body: true},
	}, a.Sandbox.CorralConfig().Secrets)
	b, err := json.Marshal(a.Sandbox)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "fromthe", "a value is never part of the sandbox's hash")
	assert.Contains(t, string(b), "NPM_TOKEN", "a secret's name and domains are")
}

func TestSecretsErrors(t *testing.T) {
	t.Setenv("CONFIG_TEST_UNSET", "")
	for _, c := range []struct{ entry, want string }{
		{`{ name = "CONFIG_TEST_UNSET", domains = ["a.example"] }`, `agents[0].sandbox.secrets[0].from: "env:CONFIG_TEST_UNSET": the variable CONFIG_TEST_UNSET is empty or unset`},
		{`{ name = "T", domains = ["a.example"], from = "file:/nonexistent/x" }`, `secrets[0].from: "file:/nonexistent/x": cannot read the file`},
		{`{ name = "T", domains = ["a.example"], from = "vault:x" }`, `want "env:NAME" or "file:/path"`},
		{`{ name = "T" }`, `secrets[0]: want name and domains`},
		{`{ name = "T", domains = ["a.example"], frm = "env:T" }`, `frm`},
	} {
		_, err := Parse(strings.NewReader("[[agents]]\nid = \"a\"\n[agents.sandbox]\nsecrets = ["+c.entry+"]\n"), "agents.toml")
		require.Error(t, err, c.entry)
		assert.Contains(t, err.Error(), c.want)
	}
}
