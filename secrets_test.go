package corral

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecretsConfigErrors(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("CORRAL_UNIT_TOKEN", "")
	allow := func(s ...Secret) Config {
		return Config{Workspace: ws, Network: NetworkAllow, AllowedDomains: []string{"api.example.com"}, Secrets: s}
	}
	for _, c := range []struct {
		name   string
		cfg    Config
		reason string
	}{
		{"network", Config{Workspace: ws, Secrets: []Secret{{Name: "T", Value: "v", Domains: []string{"a.example"}}}}, `needs Network "allow"`},
		{"name", allow(Secret{Name: "1T", Value: "v", Domains: []string{"a.example"}}), "want a variable name"},
		{"no domain", allow(Secret{Name: "T", Value: "v"}), "no domain"},
		{"bad domain", allow(Secret{Name: "T", Value: "v", Domains: []string{"a*.example"}}), "wildcard"},
		{"twice", allow(Secret{Name: "T", Value: "v", Domains: []string{"a.example"}}, Secret{Name: "T", Value: "w", Domains: []string{"b.example"}}), "named twice"},
		{"no value", allow(Secret{Name: "CORRAL_UNIT_TOKEN", Domains: []string{"a.example"}}), "variable CORRAL_UNIT_TOKEN is empty or unset"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.cfg.resolve()
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "Secrets", ce.Field)
			assert.Contains(t, ce.Error(), c.reason)
			assert.NotContains(t, ce.Error(), "v\"", "no value in the error")
		})
	}
}

// The command's environment holds the placeholder, never the value: not
// under the secret's name, not under another name Config.Env copies it
// to, not through Cmd.Env.
func TestSecretsEnvironment(t *testing.T) {
	const value = "sk-ant-api03-unitvalue0123456789abcdefghij"
	t.Setenv("CORRAL_UNIT_TOKEN", value)
	t.Setenv("OTHER_NAME", value)
	cfg := Config{Workspace: t.TempDir(), Network: NetworkAllow, AllowedDomains: []string{"api.example.com"},
		Env:     []string{"CORRAL_UNIT_TOKEN", "OTHER_NAME", "PLAIN=1"},
		Secrets: []Secret{{Name: "CORRAL_UNIT_TOKEN", Domains: []string{"api.example.com"}}}}
	s, err := cfg.resolve()
	require.NoError(t, err)
	sb := &Sandbox{spec: s, env: defaultEnv(os.Environ(), s.Env)}
	s.Secrets.bundle = "/bundle.pem"
	ph := s.Secrets.list[0].Placeholder
	assert.True(t, strings.HasPrefix(ph, "sk-ant-api03-"), ph)
	assert.Len(t, ph, len(value))
	for _, env := range [][]string{
		(&Cmd{sb: sb}).Environ(),
		(&Cmd{sb: sb, Env: []string{"CORRAL_UNIT_TOKEN=" + value, "X=a" + value + "b", "Y=y"}}).Environ(),
	} {
		joined := strings.Join(env, "\n")
		assert.NotContains(t, joined, value)
		assert.Contains(t, env, "CORRAL_UNIT_TOKEN="+ph)
		for _, v := range caVars {
			assert.Contains(t, env, v+"=/bundle.pem")
		}
	}
	assert.Contains(t, (&Cmd{sb: sb}).Environ(), "PLAIN=1")
	assert.Equal(t, []SecretInfo{{Name: "CORRAL_UNIT_TOKEN", Domains: []string{"api.example.com"}, Placeholder: ph}}, sb.Secrets())
}
