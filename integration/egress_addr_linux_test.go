package integration

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/hosttest"
	"github.com/corralhq/corral/internal/testhook"
)

// On the landlock rung the proxy listens on the host's loopback, and
// Landlock's TCP rules name ports, never addresses: a server of the
// command's choosing at another address, on the proxy's port number, is
// what they cannot keep out. The init makes the command's connections
// itself, to the proxy's address only; a thread rewriting the address
// while the connect waits never gets the other one; TCP Fast Open, a
// connect inside a send, is refused; and so is a listen that would bind
// every address of the host. A connect let go on for a unix socket whose
// descriptor number another thread points at a TCP socket meanwhile gets
// nowhere either. Each probe is run on the host too, where it
// reaches the other server.
func TestEgressLandlockRungReachesOnlyTheProxyAddress(t *testing.T) {
	s := newEgressScene(t)
	sb, logs := rungSandbox(t, corral.RungLandlock, s.config([]string{"allowed.test"}, nil))
	probe := copyProbe(t, s.ws)

	port := proxyPort(t, s.run(sb, `echo "$HTTP_PROXY"`).stdout)
	decoy, accepted := startDecoy(t, port)
	proxy := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	targets := proxy.String() + "," + decoy.String()
	run := func(mode string) string {
		return fmt.Sprintf("%s=connect %s=%s %s=%s %s", roleEnv, probeModeEnv, mode, probeTargetsEnv, targets, probe)
	}

	// The controls, on the host: the other server is reached each way.
	h := s.host(run("connect"))
	require.Equal(t, 0, h.code, h.String())
	require.Contains(t, h.stdout, decoy.String()+" ok peer "+decoy.Addr().String(), h.String())
	h = s.host(run("fastopen"))
	require.Contains(t, h.stdout, decoy.String()+" ok", h.String())
	h = s.host(run("listen"))
	require.Contains(t, h.stdout, "listen ok", h.String())
	h = s.host(run("race"))
	require.Equal(t, 0, h.code, h.String())
	t.Logf("on the host: %s", h.stdout)
	h = s.host(run("swap"))
	require.Equal(t, 0, h.code, h.String())
	require.NotContains(t, h.stdout, "swap connected=0", "control: %s", h.String())
	require.Greater(t, accepted.Load(), int64(0), "control: the host reached the other server")

	// The host's connections may still sit in the decoy's backlog: count
	// from when its tally stops moving.
	before := settled(accepted)
	r := s.run(sb, run("connect"))
	require.Equal(t, 0, r.code, r.String())
	assert.Contains(t, r.stdout, proxy.String()+" ok peer 127.0.0.1", r.String())
	assert.Contains(t, r.stdout, decoy.String()+" EACCES", r.String())
	r = s.run(sb, run("fastopen"))
	assert.Contains(t, r.stdout, decoy.String()+" "+unix.ErrnoName(unix.EOPNOTSUPP), r.String())
	assert.Contains(t, r.stdout, proxy.String()+" "+unix.ErrnoName(unix.EOPNOTSUPP), r.String())
	r = s.run(sb, run("listen"))
	assert.Contains(t, r.stdout, "listen EACCES", r.String())
	r = s.run(sb, run("race"))
	require.Equal(t, 0, r.code, r.String())
	t.Logf("in the sandbox: %s", r.stdout)
	assert.Contains(t, r.stdout, " "+decoy.Addr().String()+"=0 ", r.String())
	assert.NotContains(t, r.stdout, " 127.0.0.1=0 ", "the race reached the proxy too: %s", r.String())
	// A connect let go on for a unix socket meets Landlock, which refuses
	// every TCP connect of the command's own, if the number now names a
	// TCP socket.
	r = s.run(sb, run("swap"))
	require.Equal(t, 0, r.code, r.String())
	assert.Contains(t, r.stdout, "swap connected=0", r.String())
	assert.Equal(t, before, settled(accepted), "no connection from the sandbox reached the other server")

	assert.Contains(t, *logs, fmt.Sprintf("corral: blocked %s (%s)", decoy, corral.RuleDirect))
	assert.Contains(t, *logs, "corral: blocked 0.0.0.0:* ("+corral.RuleListen+")")
}

// A non-blocking connect to the proxy answers EINPROGRESS and completes,
// as the kernel's own would: the init's connect is made on the command's
// socket, whose flags it shares. The request gives the proxy's
// credential, from the user information of HTTP_PROXY.
func TestEgressLandlockRungNonBlockingConnect(t *testing.T) {
	requireTool(t, "python3")
	s := newEgressScene(t)
	sb, _ := rungSandbox(t, corral.RungLandlock, s.config([]string{"allowed.test"}, nil))
	script := `python3 -c '
import base64, os, select, socket, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = b"Proxy-Authorization: Basic " + base64.b64encode((u.username + ":" + u.password).encode()) + b"\r\n"
s = socket.socket(); s.setblocking(False)
print("connect", os.strerror(s.connect_ex((u.hostname, u.port))))
select.select([], [s], [], 20)
print("result", s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))
s.setblocking(True)
s.sendall(b"GET http://allowed.test:` + strconv.Itoa(s.http) + `/ HTTP/1.0\r\n" + auth + b"\r\n")
print(s.makefile().read())
'`
	r := s.run(sb, script)
	require.Equal(t, 0, r.code, r.String())
	assert.Contains(t, r.stdout, "result 0", r.String())
	assert.Contains(t, r.stdout, "hello from allowed.test", r.String())
	assert.Regexp(t, `connect (Operation now in progress|Success)`, r.stdout)
}

// copyProbe copies the test binary into dir, where the sandbox may run it.
// The copy is written by another process (install), so no descriptor open
// for writing it is ever held here, where a fork of another test's
// sandbox could carry one into a child and make running the copy fail
// with ETXTBSY.
func copyProbe(t *testing.T, dir string) string {
	self, err := os.Executable()
	require.NoError(t, err)
	probe := filepath.Join(dir, "connect-probe")
	out, err := exec.Command("install", "-m", "0755", self, probe).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return probe
}

// proxyPort is the port of the HTTP proxy a command's HTTP_PROXY names.
func proxyPort(t *testing.T, httpProxy string) int {
	u, err := url.Parse(strings.TrimSpace(httpProxy))
	require.NoError(t, err, httpProxy)
	port, err := strconv.Atoi(u.Port())
	require.NoError(t, err, httpProxy)
	return port
}

// startDecoy listens on egressAddr at port, the proxy's number on another
// address, and counts the connections it accepts.
func startDecoy(t *testing.T, port int) (netip.AddrPort, *atomic.Int64) {
	l, err := net.Listen("tcp4", net.JoinHostPort(egressAddr, strconv.Itoa(port)))
	if err != nil {
		t.Skip("cannot listen on " + egressAddr + " at the proxy's port: " + err.Error())
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return netip.MustParseAddrPort(l.Addr().String()), &n
}

// With the report on, the same listener also watches the command's writes:
// the connections are still the init's, and a refused one is in the
// command's report.
func TestEgressLandlockRungReportsRefusedConnections(t *testing.T) {
	s := newEgressScene(t)
	cfg := s.config([]string{"allowed.test"}, nil)
	cfg.Report = true
	sb, _ := rungSandbox(t, corral.RungLandlock, cfg)
	probe := copyProbe(t, s.ws)
	port := proxyPort(t, s.run(sb, `echo "$HTTP_PROXY"`).stdout)
	decoy, _ := startDecoy(t, port)
	proxy := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))

	c := sb.Command(t.Context(), probe)
	c.Env = append(c.Env, roleEnv+"=connect", probeModeEnv+"=connect", probeTargetsEnv+"="+proxy.String()+","+decoy.String())
	out, err := c.Output()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), proxy.String()+" ok peer 127.0.0.1")
	assert.Contains(t, string(out), decoy.String()+" EACCES")
	assert.Contains(t, c.Report(), corral.Violation{Kind: corral.ViolationNetwork, Target: decoy.String(),
		Rule: corral.RuleDirect, Process: "connect-probe", Count: 1})
}

// The control of the fix: without seccomp (a host without it, with
// --fallback warn) there is no listener to make the connections, Landlock
// allows the proxy's ports on any address, as documented, and the same
// probe reaches another server on the proxy's port number.
func TestEgressLandlockRungWithoutSeccompAllowsThePortOnly(t *testing.T) {
	s := newEgressScene(t)
	cfg := s.config([]string{"allowed.test"}, nil)
	cfg.Fallback = corral.FallbackWarn
	restore := testhook.Disable(string(corral.LayerUserNS), string(corral.LayerSeccomp))
	defer restore()
	r, err := corral.Doctor(cfg)
	require.NoError(t, err)
	if r.Rung != corral.RungLandlock {
		hosttest.Skipf(t, "this host cannot give rung landlock: %v", r.Without)
	}
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	probe := copyProbe(t, s.ws)

	port := proxyPort(t, s.run(sb, `echo "$HTTP_PROXY"`).stdout)
	decoy, accepted := startDecoy(t, port)
	res := s.run(sb, fmt.Sprintf("%s=connect %s=connect %s=%s %s", roleEnv, probeModeEnv, probeTargetsEnv, decoy, probe))
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, decoy.String()+" ok peer "+decoy.Addr().String(), res.String())
	assert.Positive(t, accepted.Load())
}

// The landlock rung's connections and a memory limit share the init's one
// listener with the report off: the limit still binds the command alone,
// and the proxy is still reached.
func TestEgressLandlockRungWithMemoryLimit(t *testing.T) {
	requireTool(t, "curl")
	s := newEgressScene(t)
	cfg := s.config([]string{"allowed.test"}, nil)
	cfg.Limits = corral.Limits{Memory: 32 << 20}
	sb, _ := rungSandbox(t, corral.RungLandlock, cfg)
	r := s.run(sb, `grep "Max data size" /proc/self/limits; head -c 64M /dev/zero | tail -c 64M >/dev/null && echo kept; `+curl(fmt.Sprintf("http://allowed.test:%d/", s.http)))
	assert.Regexp(t, `Max data size +33554432 +33554432 +bytes`, r.stdout, r.String())
	assert.NotContains(t, r.stdout, "kept", r.String())
	assert.Contains(t, r.stdout, "hello from allowed.test", r.String())
}

// settled returns n once it has not changed for a while: the count of a
// server that may still be taking connections made before.
func settled(n *atomic.Int64) int64 {
	v := n.Load()
	for range 50 {
		time.Sleep(200 * time.Millisecond)
		w := n.Load()
		if w == v {
			return v
		}
		v = w
	}
	return v
}
