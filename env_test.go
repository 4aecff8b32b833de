package corral

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDefaultEnvPassesProxyAndCAVariables(t *testing.T) {
	caller := []string{
		"PATH=/bin", "HTTPS_PROXY=http://proxy:3128", "no_proxy=localhost",
		"SSL_CERT_FILE=/etc/ca.pem", "NODE_EXTRA_CA_CERTS=/etc/ca.pem", "GIT_SSL_CAINFO=/etc/ca.pem",
		"GITHUB_TOKEN=x", "AWS_SECRET_ACCESS_KEY=y", "DB_PASSWD=z", "UNLISTED=1",
	}
	env := defaultEnv(caller, nil)
	assert.ElementsMatch(t, []string{
		"PATH=/bin", "HTTPS_PROXY=http://proxy:3128", "no_proxy=localhost",
		"SSL_CERT_FILE=/etc/ca.pem", "NODE_EXTRA_CA_CERTS=/etc/ca.pem", "GIT_SSL_CAINFO=/etc/ca.pem",
	}, env)
}

func TestProxyCredentialsAreRemoved(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"HTTPS_PROXY=http://user:pass@proxy:3128", "HTTPS_PROXY=http://proxy:3128"},
		{"http_proxy=http://user:p%40ss@proxy:3128/", "http_proxy=http://proxy:3128/"},
		{"ALL_PROXY=user:pass@proxy:1080", "ALL_PROXY=proxy:1080"},
		{"HTTP_PROXY=http://proxy:3128", "HTTP_PROXY=http://proxy:3128"},
		{"NO_PROXY=a@b", "NO_PROXY=a@b"}, // not a URL variable
		{"PATH=/x@y", "PATH=/x@y"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			assert.Equal(t, tc.want, withoutProxyCredentials(tc.in))
		})
	}
}

func TestFilterEnvAppliesTheSecretRuleToCmdEnv(t *testing.T) {
	sb := &Sandbox{spec: &spec{}}
	sb.spec.Env = []string{"ALLOWED_TOKEN", "HTTPS_PROXY"}
	got := sb.filterEnv([]string{
		"X=1", "GITHUB_TOKEN=x", "ALLOWED_TOKEN=ok", "MY_API_KEY=k",
		"HTTPS_PROXY=http://u:p@proxy:1", "HTTP_PROXY=http://u:p@proxy:2",
	})
	assert.Equal(t, []string{
		"X=1", "ALLOWED_TOKEN=ok", "HTTPS_PROXY=http://u:p@proxy:1", "HTTP_PROXY=http://proxy:2",
	}, got, "secrets dropped unless Config.Env names them; proxy credentials too")
}
