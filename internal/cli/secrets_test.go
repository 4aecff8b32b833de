package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const cliTestValue = "ghp_cliTestValue0123456789abcdefghijklmno"

func TestSecretFlag(t *testing.T) {
	ws := workspace(t)
	t.Setenv("CLI_TEST_TOKEN", cliTestValue)
	stdout, stderr, code := cli(t, ws, "profile", "--platform", "linux", "--net", "allow", "--allow-domain", "api.github.com",
		"--secret", "CLI_TEST_TOKEN@api.github.com,uploads.github.com")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "    CLI_TEST_TOKEN: api.github.com, uploads.github.com\n")
	assert.NotContains(t, stdout+stderr, cliTestValue)

	for _, bad := range []string{"CLI_TEST_TOKEN", "@api.github.com", "CLI_TEST_TOKEN@", "CLI_TEST_TOKEN@a.example,,b.example"} {
		_, stderr, code = cli(t, ws, "run", "--net", "allow", "--secret", bad, "--", "true")
		assert.Equal(t, exitUsage, code, bad)
		assert.Contains(t, stderr, "--secret", bad)
	}
	_, stderr, code = cli(t, ws, "run", "--secret", "CLI_TEST_TOKEN@api.github.com", "--", "true")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "--secret")
	assert.Contains(t, stderr, "needs --net allow")
	assert.NotContains(t, stderr, cliTestValue)

	stdout, stderr, code = cli(t, ws, "run", "--net", "allow", "--allow-domain", "api.github.com",
		"--secret", "CLI_TEST_TOKEN@api.github.com", "--", "sh", "-c", `printf '%s\n' "$CLI_TEST_TOKEN"`)
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "ghp_"), stdout)
	assert.Len(t, strings.TrimSpace(stdout), len(cliTestValue))
	assert.NotContains(t, stdout+stderr, cliTestValue)
}
