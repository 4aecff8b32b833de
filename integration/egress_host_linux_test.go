package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/hosttest"
	"github.com/corralhq/corral/internal/testhook"
)

// hostAddr is an address of this host's own interfaces other than
// loopback, as they are now (an eth0's).
func hostAddr(t *testing.T) netip.Addr {
	list, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, ia := range list {
		n, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		a, ok := netip.AddrFromSlice(n.IP)
		if ok && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsMulticast() {
			return a.Unmap()
		}
	}
	hosttest.Skip(t, "this host has no address but loopback and link-local ones")
	return netip.Addr{}
}

// A name that resolves to an address of the host's own interface reaches
// a service bound to every address, which localhost is refused for: the
// proxy refuses it unless an allowed range names it. The controls: the
// host reaches the service at that address, and so does the sandbox
// whose allowed IPs name it.
func TestEgressRefusesTheHostsOwnAddress(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	own := hostAddr(t)
	restore := testhook.SetResolver(func(ctx context.Context, host string) ([]netip.Addr, error) {
		if host == "own.test" {
			return []netip.Addr{own}, nil
		}
		return egressResolve(ctx, host)
	})
	t.Cleanup(restore)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from the host's service\n")
	}))
	l, err := net.Listen("tcp", ":0")
	require.NoError(t, err)
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	port := portOf(l)

	h := s.host(curl(fmt.Sprintf("http://%s/", netip.AddrPortFrom(own, uint16(port))), "--noproxy '*'"))
	require.Contains(t, h.stdout, "hello from the host's service", "control: %s", h.String())

	page := curl(fmt.Sprintf("http://own.test:%d/", port))
	allowed, _ := s.sandbox(corral.Config{Workspace: s.ws, Network: corral.NetworkAllow,
		AllowedDomains: []string{"own.test"}, AllowedIPs: []string{netip.PrefixFrom(own, own.BitLen()).String()}})
	r := s.run(allowed, page)
	require.Contains(t, r.stdout, "hello from the host's service", "control: %s", r.String())

	sb, logs := s.sandbox(corral.Config{Workspace: s.ws, Network: corral.NetworkAllow, AllowedDomains: []string{"own.test"}})
	r = s.run(sb, page)
	assert.Contains(t, r.stdout, "status 403", r.String())
	assert.NotContains(t, r.stdout, "hello", r.String())
	line := fmt.Sprintf("corral: blocked own.test:%d (resolves to %s, which is ", port, own)
	assert.Contains(t, r.stdout, line, r.String())
	assert.True(t, strings.HasPrefix(strings.Join(logs.all(), "\n"), line), "%v", logs.all())
}

// On the landlock rung the proxy listens on the host's loopback, where
// every process of the host can connect: it serves only clients with the
// sandbox's credential, which the command's proxy variables carry. An
// outsider without it is answered 407 on both sides, for an allowed
// name and a refused one alike, and nothing it asked for is reported as
// the sandbox's. The control: the same outsider with the credential is
// served, as any outsider was before.
func TestEgressLandlockProxyServesOnlyItsSandbox(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	cfg := s.config([]string{"allowed.test"}, nil)
	sb, logs := rungSandbox(t, corral.RungLandlock, cfg)
	r := s.run(sb, `printf '%s\n' "$HTTP_PROXY" "$ALL_PROXY"`)
	require.Equal(t, 0, r.code, r.String())
	vars := strings.Fields(r.stdout)
	require.Len(t, vars, 2, r.String())
	hp, err := url.Parse(vars[0])
	require.NoError(t, err)
	sp, err := url.Parse(vars[1])
	require.NoError(t, err)

	allowed := fmt.Sprintf("http://allowed.test:%d/", s.http)
	refused := fmt.Sprintf("http://other.test:%d/", s.http)
	tunnel := fmt.Sprintf("https://allowed.test:%d/", s.https)

	// The command inside: every side works.
	for _, probe := range []string{curl(allowed), curl(tunnel), curl(allowed, `-x "$ALL_PROXY"`)} {
		r := s.run(sb, probe)
		require.Equal(t, 0, r.code, r.String())
		assert.Contains(t, r.stdout, "hello from allowed.test", r.String())
	}
	*logs = nil

	// Outsiders: the proxy's ports, without the credential or with a
	// wrong one.
	bare := "127.0.0.1:" + hp.Port()
	socks := "127.0.0.1:" + sp.Port()
	for _, probe := range []string{
		curl(allowed, "-x http://"+bare), curl(refused, "-x http://"+bare), curl(tunnel, "-x http://"+bare),
		curl(allowed, "-x http://corral:"+strings.Repeat("0", 32)+"@"+bare),
	} {
		h := s.host(probe)
		assert.NotContains(t, h.stdout, "hello", h.String())
		assert.Regexp(t, `status (407|000)`, h.stdout, h.String())
		assert.NotContains(t, h.stdout, "corral: blocked", h.String())
	}
	h := s.host(curl(allowed, "-x http://"+bare))
	assert.Contains(t, h.stdout, "status 407", h.String())
	for _, probe := range []string{
		curl(allowed, "-x socks5h://"+socks), curl(refused, "-x socks5h://"+socks),
		curl(allowed, "-x socks5h://corral:nope@"+socks),
	} {
		h := s.host(probe)
		assert.NotEqual(t, 0, h.code, h.String())
		assert.NotContains(t, h.stdout, "hello", h.String())
	}
	assert.Empty(t, *logs, "nothing an outsider asked for is reported as the sandbox's")

	// The control: with the credential the command's variables carry,
	// the outsider is served.
	cred, ok := hp.User.Password()
	require.True(t, ok, "HTTP_PROXY carries a credential: %s", vars[0])
	require.Len(t, cred, 32)
	require.Equal(t, hp.User.String(), sp.User.String(), "ALL_PROXY carries the same")
	h = s.host(curl(allowed, "-x "+shellQuote(vars[0])))
	require.Contains(t, h.stdout, "hello from allowed.test", "control: %s", h.String())
	h = s.host(curl(allowed, "-x "+shellQuote(vars[1])))
	require.Contains(t, h.stdout, "hello from allowed.test", "control: %s", h.String())

	// The sandbox's own refusal still is.
	r = s.run(sb, curl(refused))
	assert.Contains(t, r.stdout, blocked("other.test", s.http, "not in allowed domains"), r.String())
	assert.True(t, hasLine(*logs, blocked("other.test", s.http, "not in allowed domains")), "%q", *logs)
}

// With the caller's HTTPS_PROXY set, the sandbox's proxy goes through it,
// and still resolves and checks each name first: a name resolving to
// loopback is refused and the upstream never asked. The control: with
// loopback allowed, the same name is reached through the upstream.
func TestEgressUpstreamProxyKeepsTheRules(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	up := &upstream{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	t.Setenv("HTTPS_PROXY", srv.URL)
	t.Setenv("https_proxy", "")
	t.Setenv("HTTP_PROXY", "")
	t.Setenv("http_proxy", "")
	page := curl(fmt.Sprintf("https://upstreamed.test:%d/", s.https))

	sb, logs := s.sandbox(corral.Config{Workspace: s.ws, Network: corral.NetworkAllow, AllowedDomains: []string{"upstreamed.test"}})
	r := s.run(sb, page)
	line := blocked("upstreamed.test", s.https, "resolves to "+egressAddr+", which is loopback and not in allowed IPs")
	assert.Contains(t, r.stderr, "CONNECT tunnel failed, response 403", r.String())
	assert.NotContains(t, r.stdout, "hello", r.String())
	assert.Empty(t, up.requests(), "the upstream was never asked")
	assert.True(t, logs.has(line), "%q", logs.all())

	control, _ := s.sandbox(s.config([]string{"upstreamed.test"}, nil))
	r = s.run(control, page)
	require.Equal(t, 0, r.code, r.String())
	assert.Contains(t, r.stdout, "hello from upstreamed.test", "control: %s", r.String())
	require.NotEmpty(t, up.requests(), "control: through the upstream")
}

// The clients commands use put the credential of the proxy URLs into
// proxy authorization by themselves: Python's urllib (plain and through
// CONNECT), git and wget, on the landlock rung, where the proxy asks for
// it. curl is in TestEgressLandlockProxyServesOnlyItsSandbox.
func TestEgressLandlockRungClientsGiveTheCredential(t *testing.T) {
	requireTool(t, "python3")
	requireTool(t, "git")
	s := newEgressScene(t)
	port := s.startGit()
	sb, _ := rungSandbox(t, corral.RungLandlock, s.config([]string{"allowed.test", "git.test"}, nil))
	r := s.run(sb, fmt.Sprintf(`python3 -c '
import ssl, urllib.request
ctx = ssl._create_unverified_context()
print(urllib.request.urlopen("http://allowed.test:%d/", timeout=20).read().decode().strip())
print(urllib.request.urlopen("https://allowed.test:%d/", timeout=20, context=ctx).read().decode().strip())
'`, s.http, s.https))
	require.Equal(t, 0, r.code, r.String())
	assert.Equal(t, fmt.Sprintf("hello from allowed.test:%d\nhello from allowed.test:%d\n", s.http, s.https), r.stdout)

	r = s.run(sb, fmt.Sprintf(`export HOME=$PWD GIT_CONFIG_NOSYSTEM=1; git clone -q http://git.test:%d/repo.git c && git -C c log --format=%%s`, port))
	require.Equal(t, 0, r.code, r.String())
	assert.Equal(t, "the commit through the proxy\n", r.stdout)

	if _, err := exec.LookPath("wget"); err == nil {
		r = s.run(sb, fmt.Sprintf(`wget -q -O - http://allowed.test:%d/`, s.http))
		require.Equal(t, 0, r.code, r.String())
		assert.Contains(t, r.stdout, "hello from allowed.test")
	}
}
