package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

func TestRunNetworkAllowUsageErrors(t *testing.T) {
	ws := workspace(t)
	file := filepath.Join(ws, "agents.toml")
	require.NoError(t, os.WriteFile(file, []byte("[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \"allow\"\nallowed_domains = [\"bad name\"]\n"), 0o644))
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"domain without --net allow", []string{"run", "--allow-domain", "example.com", "--", "true"}, `--allow-domain example.com: needs Network "allow"`},
		{"bad domain", []string{"run", "--net", "allow", "--allow-domain", "bad name", "--", "true"}, "--allow-domain bad name: "},
		{"bad denied domain", []string{"run", "--net", "allow", "--deny-domain", "*.", "--", "true"}, "--deny-domain *.: "},
		{"bad range", []string{"run", "--net", "allow", "--allow-ip", "10.0.0.0/33", "--", "true"}, "--allow-ip 10.0.0.0/33: "},
		{"bad entry in the file", []string{"run", "--config", file, "--", "true"}, `allowed_domains[0]: "bad name"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := cli(t, ws, tc.args...)
			assert.Equal(t, 2, code, "stderr: %s", stderr)
			assertOneLine(t, stderr, tc.stderr)
		})
	}
}

// A refused host is said once per command on stderr, in the words the
// proxy answered the command with.
func TestRunNetworkAllowSaysWhatItBlocked(t *testing.T) {
	sandboxtest.Require(t, corral.Config{Network: corral.NetworkAllow})
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is needed: " + err.Error())
	}
	ws := workspace(t)
	stdout, stderr, code := cli(t, ws, "run", "--net", "allow", "--allow-domain", "example.com", "--",
		"sh", "-c", `curl -sS http://10.1.2.3/; curl -sS http://10.1.2.3/again; echo "$HTTPS_PROXY $ALL_PROXY $NO_PROXY"`)
	assert.Equal(t, 0, code, "stderr: %s", stderr)
	line := "corral: blocked 10.1.2.3:80 ("
	assert.Equal(t, 2, strings.Count(stdout, line), "the command reads why, each time: %s", stdout)
	assert.Equal(t, 1, strings.Count(stderr, line), "the caller reads it once: %s", stderr)
	assert.Regexp(t, `http://127\.0\.0\.1:\d+ socks5h://127\.0\.0\.1:\d+ localhost,127\.0\.0\.1,::1`, stdout)
}

func TestProfileAndDoctorShowTheNetworkPolicy(t *testing.T) {
	ws := workspace(t)
	stdout, stderr, code := cli(t, ws, "profile", "--platform", "linux", "--net", "allow",
		"--allow-domain", "github.com", "--deny-domain", "gist.github.com", "--allow-ip", "10.0.0.0/8")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "network: allow, through corral's HTTP and SOCKS5 proxy")
	assert.Contains(t, stdout, "allowed domains: github.com")
	assert.Contains(t, stdout, "denied domains (win over allowed): gist.github.com")
	assert.Contains(t, stdout, "allowed IP ranges: 10.0.0.0/8")
	assert.Contains(t, stdout, "connections through the proxy: at most 256 open at once, more are refused")
	assert.Contains(t, stdout, "loopback only; the only way out is corral's proxy")

	stdout, _, code = cli(t, ws, "profile", "--platform", "darwin", "--net", "allow", "--allow-domain", "github.com")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, `(allow network-outbound (remote ip "localhost:PORT"))`)
	assert.NotContains(t, stdout, `(remote ip "*:*")`)

	stdout, _, _ = cli(t, ws, "doctor", "--net", "allow", "--fallback", "warn")
	assert.Contains(t, stdout, "net:   allow: ")
}
