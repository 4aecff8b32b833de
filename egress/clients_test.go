package egress

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run runs a client program with a clean environment (no proxy
// variables) and returns its combined output and whether it succeeded.
func run(t *testing.T, name string, args ...string) (string, bool) {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err == nil
}

// TestCurl: curl through each side of the proxy reaches an allowed name
// and is refused another, with the refusal in what it prints. The
// control fetches the same server without the proxy.
func TestCurl(t *testing.T) {
	plain, secure := helloServer(t, false), helloServer(t, true)
	res := mapResolver{"api.example": {"127.0.0.1"}, "evil.example": {"127.0.0.1"}}
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, loopback), Resolve: res.resolve})
	httpProxy, socks := "http://"+p.httpAddr, "socks5h://"+p.socksAddr

	out, ok := run(t, "curl", "-sS", plain.URL+"/direct")
	require.True(t, ok, "control: %s", out)

	for _, tt := range []struct {
		proxy, url string
		want       string
	}{
		{httpProxy, fmt.Sprintf("http://api.example:%d/a", port(t, plain)), "hello from api.example:%d/a"},
		{httpProxy, fmt.Sprintf("https://api.example:%d/b", port(t, secure)), "hello from api.example:%d/b"},
		{socks, fmt.Sprintf("https://api.example:%d/c", port(t, secure)), "hello from api.example:%d/c"},
		{socks, fmt.Sprintf("http://api.example:%d/d", port(t, plain)), "hello from api.example:%d/d"},
	} {
		out, ok := run(t, "curl", "-sSk", "--proxy", tt.proxy, tt.url)
		require.True(t, ok, "%s via %s: %s", tt.url, tt.proxy, out)
		pt := port(t, plain)
		if strings.HasPrefix(tt.url, "https") {
			pt = port(t, secure)
		}
		assert.Equal(t, fmt.Sprintf(tt.want, pt), out)
	}

	out, ok = run(t, "curl", "-sS", "--proxy", httpProxy, fmt.Sprintf("http://evil.example:%d/", port(t, plain)))
	assert.True(t, ok, "a 403 is a response")
	assert.Equal(t, fmt.Sprintf("corral: blocked evil.example:%d (not in allowed domains)", port(t, plain)), out)
	out, ok = run(t, "curl", "-sSk", "--proxy", httpProxy, fmt.Sprintf("https://evil.example:%d/", port(t, secure)))
	assert.False(t, ok)
	assert.Contains(t, out, "CONNECT tunnel failed, response 403")
	out, ok = run(t, "curl", "-sSk", "--proxy", socks, fmt.Sprintf("https://evil.example:%d/", port(t, secure)))
	assert.False(t, ok)
	assert.Contains(t, out, "Can't complete SOCKS5 connection to evil.example. (2)", "2: connection not allowed by ruleset")
}

// TestPython: Python's standard client shows the refusal line, which the
// proxy puts in the reason phrase of its 403 to CONNECT.
func TestPython(t *testing.T) {
	secure := helloServer(t, true)
	res := mapResolver{"api.example": {"127.0.0.1"}}
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, loopback), Resolve: res.resolve})
	script := `
import ssl, sys, urllib.request
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
opener = urllib.request.build_opener(
    urllib.request.ProxyHandler({"https": "http://" + sys.argv[1]}),
    urllib.request.HTTPSHandler(context=ctx))
try:
    print(opener.open(sys.argv[2], timeout=30).read().decode())
except Exception as e:
    print("error:", e)
`
	out, _ := run(t, "python3", "-c", script, p.httpAddr, fmt.Sprintf("https://api.example:%d/py", port(t, secure)))
	assert.Equal(t, fmt.Sprintf("hello from api.example:%d/py", port(t, secure)), out)
	out, _ = run(t, "python3", "-c", script, p.httpAddr, fmt.Sprintf("https://evil.example:%d/", port(t, secure)))
	assert.Contains(t, out, fmt.Sprintf("Tunnel connection failed: 403 corral: blocked evil.example:%d (not in allowed domains)", port(t, secure)))
}
