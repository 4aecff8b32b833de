package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
	"github.com/corralhq/corral/internal/testhook"
)

// The servers of these tests listen on 127.0.0.2, which the proxy's
// injected resolver gives for every test name: nothing leaves the machine
// and no DNS is asked. A sandbox reaches them only through its proxy, and
// only with AllowedIPs covering loopback.
const egressAddr = "127.0.0.2"

// egressNames maps the names the tests use to addresses.
var egressNames = map[string]string{
	"allowed.test":     egressAddr,
	"other.test":       egressAddr,
	"a.wild.test":      egressAddr,
	"bad.wild.test":    egressAddr,
	"ported.test":      egressAddr,
	"git.test":         egressAddr,
	"echo.test":        egressAddr,
	"metadata.test":    "169.254.169.254",
	"upstreamed.test":  egressAddr,
	"not-listed.test":  egressAddr,
	"also-denied.test": egressAddr,
	"held.test":        egressAddr,
}

func egressResolve(_ context.Context, host string) ([]netip.Addr, error) {
	if a, ok := egressNames[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// egressScene is the host side: an HTTP server, an HTTPS one with a
// self-signed certificate, a TCP echo server and git's smart HTTP server,
// all on egressAddr.
type egressScene struct {
	t                 *testing.T
	ws                string
	http, https, echo int // ports
}

func listenEgress(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp4", egressAddr+":0")
	if err != nil {
		t.Skip("cannot listen on " + egressAddr + ": " + err.Error())
	}
	return l
}

func portOf(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }

func newEgressScene(t *testing.T) *egressScene {
	t.Helper()
	restore := testhook.SetResolver(egressResolve)
	t.Cleanup(restore)
	s := &egressScene{t: t, ws: realDir(t)}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", r.Host)
	})
	srv := httptest.NewUnstartedServer(hello)
	srv.Listener = listenEgress(t)
	srv.Start()
	t.Cleanup(srv.Close)
	s.http = portOf(srv.Listener)
	tlsSrv := httptest.NewUnstartedServer(hello)
	tlsSrv.Listener = listenEgress(t)
	// Refused and cut-off clients make handshakes fail: not news here.
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	s.https = portOf(tlsSrv.Listener)
	s.echo = startEcho(t)
	return s
}

// startEcho serves a raw TCP echo on egressAddr.
func startEcho(t *testing.T) int {
	l := listenEgress(t)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return portOf(l)
}

// startGit serves a bare repository holding one commit through git
// http-backend, git's smart HTTP protocol.
func (s *egressScene) startGit() int {
	t := s.t
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is needed: " + err.Error())
	}
	root := realDir(t)
	work := filepath.Join(root, "work")
	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	for _, args := range [][]string{
		{"init", "-q", "--bare", filepath.Join(root, "repo.git")},
		{"init", "-q", work},
		{"-C", work, "commit", "-q", "--allow-empty", "-m", "the commit through the proxy"},
		{"-C", work, "push", "-q", filepath.Join(root, "repo.git"), "HEAD:refs/heads/main"},
		{"-C", filepath.Join(root, "repo.git"), "symbolic-ref", "HEAD", "refs/heads/main"},
	} {
		cmd := exec.Command(git, args...)
		cmd.Env = gitEnv
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	// Readable by the unprivileged user the suite may run as.
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			os.Chmod(p, fi.Mode()|0o555)
		}
		return err
	}))
	h := &cgi.Handler{Path: git, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = listenEgress(t)
	srv.Start()
	t.Cleanup(srv.Close)
	return portOf(srv.Listener)
}

// config is a NetworkAllow sandbox over the scene's workspace that may
// reach loopback addresses.
func (s *egressScene) config(allowed, denied []string) corral.Config {
	return corral.Config{
		Workspace: s.ws, Network: corral.NetworkAllow,
		AllowedDomains: allowed, DeniedDomains: denied, AllowedIPs: []string{"127.0.0.0/8"},
	}
}

// sandbox makes a sandbox from cfg and collects what it logs.
func (s *egressScene) sandbox(cfg corral.Config) (*corral.Sandbox, *logLines) {
	s.t.Helper()
	logs := &logLines{}
	cfg.Logf = logs.logf
	sandboxtest.Require(s.t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(s.t, err)
	s.t.Cleanup(func() { sb.Close() })
	return sb, logs
}

type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// has tells whether a line starts with line (see hasLine).
func (l *logLines) has(line string) bool { return hasLine(l.all(), line) }

// hasLine tells whether one of lines starts with line: a refusal's line
// goes on to name what allows it.
func hasLine(lines []string, line string) bool {
	return slices.ContainsFunc(lines, func(s string) bool { return strings.HasPrefix(s, line) })
}

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// run runs script with sh in sb, with the sandbox's default environment
// (which names the proxy).
func (s *egressScene) run(sb *corral.Sandbox, script string) result {
	s.t.Helper()
	c := sb.Command(s.t.Context(), "/bin/sh", "-c", script)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	code := 0
	if err != nil {
		var ee *corral.ExitError
		require.ErrorAs(s.t, err, &ee, "stderr: %s", stderr.String())
		code = ee.ExitCode()
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// host runs script on the host, unsandboxed: the control of every probe.
func (s *egressScene) host(script string, env ...string) result {
	s.t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + s.ws}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(s.t, err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skip(name + " is needed: " + err.Error())
	}
}

// curl fetches url and prints the body, or the proxy's answer to a
// refused one ("corral: blocked ..."), with the HTTP status last.
func curl(url string, args ...string) string {
	return fmt.Sprintf(`curl -sS -k --max-time 20 %s -w '\nstatus %%{http_code}\n' %s`, strings.Join(args, " "), url)
}

func blocked(host string, port int, reason string) string {
	return fmt.Sprintf("corral: blocked %s:%d (%s)", host, port, reason)
}

func TestEgressCurlReachesAllowedNamesOnly(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	sb, logs := s.sandbox(s.config([]string{"allowed.test"}, nil))
	for _, c := range []struct {
		name, url string
		host      string
		port      int
	}{
		{"http", fmt.Sprintf("http://allowed.test:%d/", s.http), "allowed.test", s.http},
		{"https through CONNECT", fmt.Sprintf("https://allowed.test:%d/", s.https), "allowed.test", s.https},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.run(sb, curl(c.url))
			require.Equal(t, 0, r.code, r.String())
			assert.Contains(t, r.stdout, "hello from allowed.test")
			assert.Contains(t, r.stdout, "status 200")
		})
	}
	t.Run("refused with the reason", func(t *testing.T) {
		r := s.run(sb, curl(fmt.Sprintf("http://other.test:%d/", s.http)))
		assert.Contains(t, r.stdout, "status 403", r.String())
		assert.Contains(t, r.stdout, blocked("other.test", s.http, "not in allowed domains"))
		// HTTPS: the CONNECT is refused; curl says so.
		r = s.run(sb, curl(fmt.Sprintf("https://other.test:%d/", s.https), "-v"))
		assert.NotEqual(t, 0, r.code, r.String())
		assert.Contains(t, r.stderr, "403")
		assert.NotContains(t, r.stdout, "hello")
	})
	assert.True(t, logs.has(blocked("other.test", s.http, "not in allowed domains")),
		"the caller hears of each refusal once: %q", logs.all())
}

func TestEgressRules(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	sb, _ := s.sandbox(s.config(
		[]string{"*.wild.test", "ported.test:" + strconv.Itoa(s.http), "metadata.test", "also-denied.test"},
		[]string{"bad.wild.test", "ALSO-denied.test"}))
	ok := func(t *testing.T, url, want string) {
		r := s.run(sb, curl(url))
		require.Equal(t, 0, r.code, r.String())
		assert.Contains(t, r.stdout, want)
		assert.Contains(t, r.stdout, "status 200")
	}
	refused := func(t *testing.T, url, want string) {
		r := s.run(sb, curl(url))
		assert.Contains(t, r.stdout, "status 403", r.String())
		assert.Contains(t, r.stdout, want, r.String())
		assert.NotContains(t, r.stdout, "hello")
	}
	refusedTLS := func(t *testing.T, url string) {
		r := s.run(sb, curl(url))
		assert.NotEqual(t, 0, r.code, r.String())
		assert.Contains(t, r.stderr, "CONNECT tunnel failed, response 403", r.String())
		assert.NotContains(t, r.stdout, "hello")
	}
	t.Run("wildcard", func(t *testing.T) {
		ok(t, fmt.Sprintf("http://a.wild.test:%d/", s.http), "hello from a.wild.test")
		ok(t, fmt.Sprintf("http://A.Wild.TEST:%d/", s.http), "hello from")
		refused(t, fmt.Sprintf("http://not-listed.test:%d/", s.http), "(not in allowed domains)")
	})
	t.Run("deny wins", func(t *testing.T) {
		refused(t, fmt.Sprintf("http://bad.wild.test:%d/", s.http), "corral: blocked bad.wild.test")
		refused(t, fmt.Sprintf("http://also-denied.test:%d/", s.http), "corral: blocked also-denied.test")
	})
	t.Run("port", func(t *testing.T) {
		ok(t, fmt.Sprintf("http://ported.test:%d/", s.http), "hello from ported.test")
		refused(t, fmt.Sprintf("http://ported.test:%d/", s.echo), blocked("ported.test", s.echo, "not in allowed domains"))
		refusedTLS(t, fmt.Sprintf("https://ported.test:%d/", s.https))
	})
	t.Run("ip literal outside the allowed ranges", func(t *testing.T) {
		refused(t, "http://10.1.2.3:80/", "corral: blocked 10.1.2.3:80")
		refused(t, "http://[fd00::1]:80/", "corral: blocked [fd00::1]:80")
		// Inside an allowed range, a literal is reached.
		ok(t, fmt.Sprintf("http://%s:%d/", egressAddr, s.http), "hello from "+egressAddr)
	})
	t.Run("an allowed name resolving to the metadata address", func(t *testing.T) {
		refused(t, "http://metadata.test/latest/meta-data/", "corral: blocked metadata.test:80")
	})
}

func TestEgressLoopbackNeedsAllowedIPs(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	cfg := s.config([]string{"allowed.test"}, nil)
	cfg.AllowedIPs = nil
	sb, _ := s.sandbox(cfg)
	// The control: the name's address serves on the host.
	h := s.host(curl(fmt.Sprintf("http://%s:%d/", egressAddr, s.http)))
	require.Contains(t, h.stdout, "status 200", h.String())
	r := s.run(sb, curl(fmt.Sprintf("http://allowed.test:%d/", s.http)))
	assert.Contains(t, r.stdout, "status 403", r.String())
	assert.Contains(t, r.stdout, "corral: blocked allowed.test")
	assert.NotContains(t, r.stdout, "hello")
}

// A client that ignores the proxy variables has no route anywhere: the
// sandbox's network has only its own loopback.
func TestEgressWithoutTheProxyThereIsNoRoute(t *testing.T) {
	requireTool(t, "curl")
	requireTool(t, "python3")
	s := newEgressScene(t)
	sb, _ := s.sandbox(s.config([]string{"allowed.test"}, nil))
	direct := curl(fmt.Sprintf("http://%s:%d/", egressAddr, s.http), "--noproxy '*'")
	raw := fmt.Sprintf(`python3 -c 'import socket; socket.create_connection(("%s", %d), timeout=10); print("connected")'`, egressAddr, s.echo)
	udp := `python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("10.9.9.9", 53)); print("sent")'`
	// The controls.
	h := s.host(direct)
	require.Contains(t, h.stdout, "status 200", h.String())
	h = s.host(raw)
	require.Equal(t, "connected\n", h.stdout, h.String())
	for _, probe := range []string{direct, raw, udp} {
		r := s.run(sb, probe)
		assert.NotEqual(t, 0, r.code, r.String())
		assert.NotContains(t, r.stdout, "hello")
		assert.NotContains(t, r.stdout, "connected")
		assert.NotContains(t, r.stdout, "sent")
	}
}

func TestEgressPythonAndSOCKS5(t *testing.T) {
	requireTool(t, "python3")
	requireTool(t, "curl")
	s := newEgressScene(t)
	sb, _ := s.sandbox(s.config([]string{"allowed.test", "echo.test:" + strconv.Itoa(s.echo)}, nil))
	t.Run("urllib", func(t *testing.T) {
		r := s.run(sb, fmt.Sprintf(`python3 -c '
import ssl, urllib.request, urllib.error
ctx = ssl._create_unverified_context()
print(urllib.request.urlopen("http://allowed.test:%d/", timeout=20).read().decode().strip())
print(urllib.request.urlopen("https://allowed.test:%d/", timeout=20, context=ctx).read().decode().strip())
try:
    urllib.request.urlopen("http://other.test:%d/", timeout=20)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
'`, s.http, s.https, s.http))
		require.Equal(t, 0, r.code, r.String())
		assert.Equal(t, fmt.Sprintf("hello from allowed.test:%d\nhello from allowed.test:%d\n403 %s\n",
			s.http, s.https, blocked("other.test", s.http, "not in allowed domains")), r.stdout)
	})
	t.Run("curl through SOCKS5", func(t *testing.T) {
		r := s.run(sb, curl(fmt.Sprintf("http://allowed.test:%d/", s.http), `-x "$ALL_PROXY"`))
		require.Equal(t, 0, r.code, r.String())
		assert.Contains(t, r.stdout, "hello from allowed.test")
		r = s.run(sb, curl(fmt.Sprintf("http://other.test:%d/", s.http), `-x "$ALL_PROXY"`))
		assert.NotEqual(t, 0, r.code, r.String())
		assert.NotContains(t, r.stdout, "hello")
	})
	t.Run("raw TCP through SOCKS5", func(t *testing.T) {
		socks := `python3 -c '
import os, socket, struct, sys
host, port = sys.argv[1], int(sys.argv[2])
p = os.environ["ALL_PROXY"].rsplit(":", 1)
s = socket.create_connection(("127.0.0.1", int(p[1])), timeout=20)
s.sendall(b"\x05\x01\x00")
assert s.recv(2) == b"\x05\x00"
s.sendall(b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode() + struct.pack(">H", port))
r = s.recv(10)
if r[1] != 0:
    print("refused", r[1]); sys.exit(1)
s.sendall(b"ping through socks\n")
print(s.recv(100).decode().strip())
' `
		r := s.run(sb, socks+fmt.Sprintf("echo.test %d", s.echo))
		require.Equal(t, 0, r.code, r.String())
		assert.Equal(t, "ping through socks\n", r.stdout)
		// 2 is SOCKS5's "connection not allowed by ruleset".
		r = s.run(sb, socks+fmt.Sprintf("other.test %d", s.echo))
		assert.Equal(t, "refused 2\n", r.stdout, r.String())
	})
}

func TestEgressGitSmartHTTP(t *testing.T) {
	requireTool(t, "git")
	s := newEgressScene(t)
	port := s.startGit()
	sb, _ := s.sandbox(s.config([]string{"git.test"}, nil))
	clone := `export HOME=$PWD GIT_CONFIG_NOSYSTEM=1; git clone -q http://%s:%d/repo.git clone-%s && git -C clone-%[3]s log --format=%%s`
	r := s.run(sb, fmt.Sprintf(clone, "git.test", port, "a"))
	require.Equal(t, 0, r.code, r.String())
	assert.Equal(t, "the commit through the proxy\n", r.stdout)
	r = s.run(sb, fmt.Sprintf(clone, "other.test", port, "b"))
	assert.NotEqual(t, 0, r.code, r.String())
	assert.Contains(t, r.stderr, "403")
}

// A running command's next connection follows lists changed meanwhile.
func TestEgressReloadReachesRunningCommands(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	sb, _ := s.sandbox(s.config([]string{"allowed.test"}, nil))
	url := fmt.Sprintf("http://other.test:%d/", s.http)
	c := sb.Command(t.Context(), "/bin/sh", "-c", curl(url)+"; read line; "+curl(url))
	stdin, err := c.StdinPipe()
	require.NoError(t, err)
	stdout, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	out := bufio.NewReader(stdout)
	var before string
	for !strings.HasPrefix(before, "status") {
		line, err := out.ReadString('\n')
		require.NoError(t, err, before)
		before = line
	}
	assert.Equal(t, "status 403\n", before)
	require.NoError(t, sb.SetNetworkRules([]string{"allowed.test", "other.test"}, nil, []string{"127.0.0.0/8"}))
	io.WriteString(stdin, "go\n")
	rest, err := io.ReadAll(out)
	require.NoError(t, err)
	require.NoError(t, c.Wait())
	assert.Contains(t, string(rest), "hello from other.test")
	assert.Contains(t, string(rest), "status 200")

	// And the other way: a name taken out is refused from then on.
	require.NoError(t, sb.SetNetworkRules([]string{"allowed.test"}, nil, []string{"127.0.0.0/8"}))
	r := s.run(sb, curl(url))
	assert.Contains(t, r.stdout, "status 403", r.String())
}

// upstream is a CONNECT proxy standing for the caller's own (a corporate
// proxy): it records what it was asked and tunnels.
type upstream struct {
	mu    sync.Mutex
	asked []string
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.asked = append(u.asked, r.Method+" "+r.Host)
	u.mu.Unlock()
	if r.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	// The upstream resolves names, here from the same map.
	host, port, _ := net.SplitHostPort(r.Host)
	if a, ok := egressNames[host]; ok {
		host = a
	}
	dst, err := net.Dial("tcp", net.JoinHostPort(host, port))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.WriteHeader(http.StatusOK)
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		dst.Close()
		return
	}
	go func() { io.Copy(dst, buf); dst.Close() }()
	io.Copy(conn, dst)
	conn.Close()
}

func (u *upstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.asked...)
}

func TestEgressUpstreamProxy(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	up := &upstream{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	t.Setenv("HTTPS_PROXY", srv.URL)
	t.Setenv("https_proxy", "")
	t.Setenv("HTTP_PROXY", "")
	t.Setenv("http_proxy", "")
	sb, _ := s.sandbox(s.config([]string{"upstreamed.test"}, nil))
	r := s.run(sb, `printf '%s\n' "$HTTPS_PROXY" "$https_proxy" "$NO_PROXY"`)
	require.Equal(t, 0, r.code, r.String())
	assert.NotContains(t, r.stdout, srv.URL, "the command's variables name the sandbox's proxy, not the caller's")
	assert.Contains(t, r.stdout, "localhost,127.0.0.1,::1")
	r = s.run(sb, curl(fmt.Sprintf("https://upstreamed.test:%d/", s.https)))
	require.Equal(t, 0, r.code, r.String())
	assert.Contains(t, r.stdout, "hello from upstreamed.test")
	asked := up.requests()
	require.NotEmpty(t, asked, "the connection went through the caller's proxy")
	assert.Contains(t, asked[0], "CONNECT")
	assert.Contains(t, asked[0], strconv.Itoa(s.https))
}

// The landlock rung has no network namespace: the proxy listens on the
// host's loopback, Landlock lets commands connect only to its ports and
// seccomp refuses every socket but TCP.
func TestEgressLandlockRung(t *testing.T) {
	requireTool(t, "curl")
	requireTool(t, "python3")
	s := newEgressScene(t)
	cfg := s.config([]string{"allowed.test"}, nil)
	restore := testhook.SetResolver(egressResolve)
	defer restore()
	sb, logs := rungSandbox(t, corral.RungLandlock, cfg)
	r := s.run(sb, curl(fmt.Sprintf("http://allowed.test:%d/", s.http)))
	require.Equal(t, 0, r.code, r.String())
	assert.Contains(t, r.stdout, "hello from allowed.test")
	r = s.run(sb, curl(fmt.Sprintf("https://allowed.test:%d/", s.https)))
	require.Equal(t, 0, r.code, r.String())
	assert.Contains(t, r.stdout, "hello from allowed.test")
	r = s.run(sb, curl(fmt.Sprintf("http://other.test:%d/", s.http)))
	assert.Contains(t, r.stdout, blocked("other.test", s.http, "not in allowed domains"), r.String())

	direct := curl(fmt.Sprintf("http://%s:%d/", egressAddr, s.http), "--noproxy '*'")
	udp := `python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", 9)); print("sent")'`
	bind := `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print("listening")'`
	for _, probe := range []string{direct, udp, bind} {
		h := s.host(probe)
		require.Equal(t, 0, h.code, "control: %s", h.String())
		r := s.run(sb, probe)
		assert.NotEqual(t, 0, r.code, r.String())
		assert.NotContains(t, r.stdout, "hello")
		assert.NotContains(t, r.stdout, "sent")
		assert.NotContains(t, r.stdout, "listening")
	}
	assert.True(t, hasLine(*logs, blocked("other.test", s.http, "not in allowed domains")), "%q", *logs)
}

// The control of TLS: the sandbox's curl verifies nothing here (-k), so
// this shows the HTTPS server really speaks TLS.
func TestEgressSceneSpeaksTLS(t *testing.T) {
	s := newEgressScene(t)
	c, err := tls.Dial("tcp", fmt.Sprintf("%s:%d", egressAddr, s.https), &tls.Config{InsecureSkipVerify: true})
	require.NoError(t, err)
	c.Close()
}

// Nothing a command opened through its proxy outlives its sandbox: the
// server sees the connection end once the command is gone, though the
// command left it open.
func TestEgressConnectionsEndWithTheSandbox(t *testing.T) {
	requireTool(t, "python3")
	s := newEgressScene(t)
	l := listenEgress(t)
	t.Cleanup(func() { l.Close() })
	ended := make(chan struct{})
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		io.WriteString(c, "open\n")
		io.Copy(io.Discard, c) // until the other side goes away
		close(ended)
	}()
	port := portOf(l)
	sb, _ := s.sandbox(s.config([]string{"held.test"}, nil))
	r := s.run(sb, fmt.Sprintf(`python3 -c '
import os, socket, struct, sys, time
p = os.environ["ALL_PROXY"].rsplit(":", 1)
s = socket.create_connection(("127.0.0.1", int(p[1])), timeout=20)
s.sendall(b"\x05\x01\x00"); s.recv(2)
h = b"held.test"
s.sendall(b"\x05\x01\x00\x03" + bytes([len(h)]) + h + struct.pack(">H", %d)); s.recv(10)
print(s.recv(5).decode().strip())
# a child keeps the connection open after the command exits
if os.fork() == 0:
    time.sleep(600)
' `, port))
	require.Equal(t, 0, r.code, r.String())
	require.Equal(t, "open\n", r.stdout)
	select {
	case <-ended:
	case <-t.Context().Done():
		t.Fatal("the connection outlived the sandbox")
	}
}

// DNS rebinding between check and dial: a name that answers an allowed
// address once and another address after. The proxy dials what it
// checked, so the second server is never reached.
func TestEgressRebindingNeverReachesTheSecondAddress(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	first := listenEgress(t)
	t.Cleanup(func() { first.Close() })
	port := portOf(first)
	second, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.3:%d", port))
	if err != nil {
		t.Skip("cannot listen on 127.0.0.3 at the same port: " + err.Error())
	}
	t.Cleanup(func() { second.Close() })
	for l, body := range map[net.Listener]string{first: "checked\n", second: "rebound\n"} {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) })}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
	}
	var mu sync.Mutex
	calls := 0
	restore := testhook.SetResolver(func(ctx context.Context, host string) ([]netip.Addr, error) {
		if host != "rebind.test" {
			return egressResolve(ctx, host)
		}
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls%2 == 1 {
			return []netip.Addr{netip.MustParseAddr(egressAddr)}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.3")}, nil
	})
	defer restore()
	// The control: the second address serves, from the host.
	h := s.host(curl(fmt.Sprintf("http://127.0.0.3:%d/", port)))
	require.Contains(t, h.stdout, "rebound", h.String())

	cfg := s.config([]string{"rebind.test"}, nil)
	cfg.AllowedIPs = []string{egressAddr + "/32"}
	sb, _ := s.sandbox(cfg)
	for range 4 {
		r := s.run(sb, curl(fmt.Sprintf("http://rebind.test:%d/", port)))
		assert.NotContains(t, r.stdout, "rebound", r.String())
		assert.True(t, strings.Contains(r.stdout, "checked") || strings.Contains(r.stdout, "status 403"), r.String())
	}
}

// A command holding as many connections through the proxy as
// ProxyConnections allows is refused one more, in words it can act on,
// and the caller hears of it. The control: the same request, made while
// nothing is held, goes through.
func TestEgressConnectionCap(t *testing.T) {
	requireTool(t, "curl")
	requireTool(t, "python3")
	s := newEgressScene(t)
	cfg := s.config([]string{"allowed.test", "echo.test"}, nil)
	cfg.ProxyConnections = 2
	sb, logs := s.sandbox(cfg)
	s.connectionCap(sb, logs.all)
}

// On the landlock rung one proxy serves all of a sandbox's commands: the
// cap is theirs together.
func TestEgressConnectionCapLandlockRung(t *testing.T) {
	requireTool(t, "curl")
	requireTool(t, "python3")
	s := newEgressScene(t)
	cfg := s.config([]string{"allowed.test", "echo.test"}, nil)
	cfg.ProxyConnections = 2
	restore := testhook.SetResolver(egressResolve)
	defer restore()
	sb, logs := rungSandbox(t, corral.RungLandlock, cfg)
	s.connectionCap(sb, func() []string { return *logs })
}

func (s *egressScene) connectionCap(sb *corral.Sandbox, logs func() []string) {
	t := s.t
	get := curl(fmt.Sprintf("http://allowed.test:%d/", s.http))
	r := s.run(sb, get)
	require.Equal(t, 0, r.code, r.String())
	require.Contains(t, r.stdout, "status 200", "control: %s", r.String())

	// Two tunnels through SOCKS5 are held open while curl runs, with
	// the proxy's credential when ALL_PROXY carries one. A
	// connection of the control's may still be counted a moment after it
	// ended: a refused tunnel is tried again.
	r = s.run(sb, fmt.Sprintf(`python3 -c '
import os, socket, struct, subprocess, sys, time, urllib.parse
u = urllib.parse.urlsplit(os.environ["ALL_PROXY"])
def tunnel():
    for _ in range(200):
        s = socket.create_connection(("127.0.0.1", u.port), timeout=20)
        if u.password:
            s.sendall(b"\x05\x01\x02")
            assert s.recv(2) == b"\x05\x02"
            user, pw = u.username.encode(), u.password.encode()
            s.sendall(bytes([1, len(user)]) + user + bytes([len(pw)]) + pw)
            assert s.recv(2) == b"\x01\x00"
        else:
            s.sendall(b"\x05\x01\x00")
            assert s.recv(2) == b"\x05\x00"
        h = b"echo.test"
        s.sendall(b"\x05\x01\x00\x03" + bytes([len(h)]) + h + struct.pack(">H", %d))
        if s.recv(10)[1] == 0:
            s.sendall(b"x\n")
            assert s.recv(2) == b"x\n"
            return s
        s.close()
        time.sleep(0.05)
    sys.exit("every tunnel refused")
held = [tunnel(), tunnel()]
sys.stdout.flush()
subprocess.run(sys.argv[1], shell=True)
' %s`, s.echo, shellQuote(get)))
	require.Equal(t, 0, r.code, r.String())
	line := blocked("allowed.test", s.http, "over the limit of 2 connections open through the proxy at once")
	assert.Contains(t, r.stdout, line, r.String())
	assert.Contains(t, r.stdout, "status 403", r.String())
	assert.NotContains(t, r.stdout, "hello")
	assert.Contains(t, logs(), line, "the caller hears of it")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// An allowed name that does not resolve: over HTTP the client gets the
// proxy's reason in its 502's body; over HTTPS (CONNECT) curl shows none of
// it, so the caller is told, once per name and port and command, through Logf (a
// `corral:` line from corral run), as over HTTP. Without the line, nothing
// said why.
func TestEgressUnresolvedNameIsTold(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	sb, logs := s.sandbox(s.config([]string{"nowhere.test"}, nil))
	// Twice in one command: one line (each command has a proxy of its own).
	r := s.run(sb, curl("https://nowhere.test:443/")+"; "+curl("https://nowhere.test:443/"))
	assert.NotContains(t, r.stdout, "status 200", r.String())
	var told []string
	for _, l := range logs.all() {
		if strings.Contains(l, "nowhere.test:443") {
			told = append(told, l)
		}
	}
	require.Len(t, told, 1, "one line for the name: %q", logs.all())
	assert.True(t, strings.HasPrefix(told[0], "corral: cannot reach nowhere.test:443 through the sandbox's proxy: "), told[0])
	assert.Contains(t, told[0], "no such host")
}
