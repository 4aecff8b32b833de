package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/hosttest"
	"github.com/corralhq/corral/internal/testhook"
)

// hostService is an HTTP service of the host's, on its loopback only.
func hostService(t *testing.T, name string) int {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", name)
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// runScript runs script with sh -c in sb, the caller's PATH, and its
// report.
func runScript(t *testing.T, sb *corral.Sandbox, script string) (result, []corral.Violation) {
	t.Helper()
	c := sb.Command(t.Context(), "/bin/sh", "-c", script)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	code := 0
	if err != nil {
		var ee *corral.ExitError
		require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
		code = ee.ExitCode()
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}, c.Report()
}

// fetch is a curl that prints the body, or nothing, and never a proxy's
// answer: loopback is not proxied.
func fetch(target string) string {
	return fmt.Sprintf(`curl -sS --noproxy '*' --max-time 20 %s; echo "exit $?"`, target)
}

// A host port reaches the host's loopback service on that port, at
// localhost, 127.0.0.1 and [::1] alike, and no other host port is
// reachable: a second service of the host's stays out of reach, and the
// refused connection is reported with the flag that would allow it. The
// control: the host reaches both services with the same probe.
func TestHostPortReachesTheHostsService(t *testing.T) {
	requireTool(t, "curl")
	allowed := hostService(t, "the allowed service")
	other := hostService(t, "another service")
	for _, port := range []int{allowed, other} {
		out, err := exec.Command("sh", "-c", fetch("http://127.0.0.1:"+strconv.Itoa(port)+"/")).CombinedOutput()
		require.NoError(t, err)
		require.Contains(t, string(out), "hello from", "control: the host reaches its own service: %s", out)
	}
	for _, rung := range []corral.Rung{corral.RungFull, corral.RungLandlock} {
		for _, network := range []corral.Network{corral.NetworkNone, corral.NetworkAllow} {
			t.Run(string(rung)+"/"+string(network), func(t *testing.T) {
				cfg := corral.Config{Workspace: realDir(t), Network: network, HostPorts: []int{allowed}, Report: true}
				sb, _ := rungSandbox(t, rung, cfg)
				targets := []string{"localhost", "127.0.0.1"}
				if rung == corral.RungFull {
					// The caller dials the host's loopback whatever
					// address the command named; on the landlock rung the
					// command's own socket goes to [::1], where this
					// service does not listen.
					targets = append(targets, "[::1]")
				}
				for _, host := range targets {
					r, _ := runScript(t, sb, fetch(fmt.Sprintf("http://%s:%d/", host, allowed)))
					assert.Contains(t, r.stdout, "hello from the allowed service", "%s: %s", host, r)
				}
				r, report := runScript(t, sb, fetch(fmt.Sprintf("http://127.0.0.1:%d/", other)))
				assert.NotContains(t, r.stdout, "hello", r.String())
				assert.NotContains(t, r.stdout, "exit 0", r.String())
				want := "--allow-host-port " + strconv.Itoa(other) + " (host_ports)"
				assert.Contains(t, allowsOf(report), want, "%+v", report)

				// A port the host does not serve either: the sandbox is not
				// why it fails on the full rung, and nothing is reported.
				// On the landlock rung the init refuses it before anyone
				// could tell.
				nobody := freePort(t)
				r, report = runScript(t, sb, fetch(fmt.Sprintf("http://127.0.0.1:%d/", nobody)))
				assert.NotContains(t, r.stdout, "exit 0", r.String())
				if rung == corral.RungFull {
					for _, v := range report {
						assert.NotEqual(t, corral.ViolationNetwork, v.Kind, "nothing served there on the host: %+v", v)
					}
				}
			})
		}
	}
}

// UDP to a host port is refused, with the reason in the report: host
// ports carry TCP only. The control: the same datagram is sent without
// the sandbox.
func TestHostPortRefusesUDP(t *testing.T) {
	requireTool(t, "bash")
	port := hostService(t, "the allowed service")
	send := fmt.Sprintf(`echo datagram > /dev/udp/127.0.0.1/%d && echo sent`, port)
	out, err := exec.Command("bash", "-c", send).CombinedOutput()
	require.NoError(t, err, "control: %s", out)
	require.Contains(t, string(out), "sent")
	for _, rung := range []corral.Rung{corral.RungFull, corral.RungLandlock} {
		t.Run(string(rung), func(t *testing.T) {
			cfg := corral.Config{Workspace: realDir(t), Network: corral.NetworkNone, HostPorts: []int{port}, Report: true}
			sb, _ := rungSandbox(t, rung, cfg)
			r, report := runScript(t, sb, "bash -c '"+send+"'")
			assert.NotContains(t, r.stdout, "sent", r.String())
			var rules []string
			for _, v := range report {
				rules = append(rules, v.Rule)
			}
			assert.Contains(t, strings.Join(rules, "\n"), "only TCP leaves the sandbox", "%+v", report)
		})
	}
}

// runServe is the "serve" role: an HTTP server on 127.0.0.1 at
// CORRAL_TEST_PORT until its standard input ends.
func runServe() int {
	l, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("CORRAL_TEST_PORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello from inside")
	}))
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// freePort is a port of the host's loopback that nothing listens on now.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// A published port reaches the command's server from the host while the
// command runs, and nothing listens there before or after; Logf names the
// URL once the server inside listens. The control for "nothing listens":
// the same dial reaches the port while the command runs.
func TestPublishReachesTheCommandsServer(t *testing.T) {
	hostPort, inner := freePort(t), 8000
	url := fmt.Sprintf("http://127.0.0.1:%d/", hostPort)
	for _, network := range []corral.Network{corral.NetworkNone, corral.NetworkAllow} {
		t.Run(string(network), func(t *testing.T) {
			announced := make(chan string, 4)
			ws := realDir(t)
			exe := copyProbe(t, ws)
			cfg := corral.Config{Workspace: ws, Network: network,
				Publish: []string{fmt.Sprintf("%d:%d", hostPort, inner)},
				Logf:    func(format string, args ...any) { announced <- fmt.Sprintf(format, args...) }}
			sb, err := onRung(t, corral.RungFull, cfg)
			require.NoError(t, err)
			t.Cleanup(func() { sb.Close() })
			_, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", hostPort))
			require.Error(t, err, "nothing listens before the command")
			c := sb.Command(t.Context(), exe)
			c.Env = []string{roleEnv + "=serve", "CORRAL_TEST_PORT=" + strconv.Itoa(inner)}
			stdin, err := c.StdinPipe()
			require.NoError(t, err)
			var stderr bytes.Buffer
			c.Stderr = &stderr
			require.NoError(t, c.Start())
			line := <-announced
			assert.Equal(t, fmt.Sprintf("corral: published http://127.0.0.1:%d (port %d inside)", hostPort, inner), line)
			resp, err := http.Get(url)
			require.NoError(t, err, stderr.String())
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, "hello from inside\n", string(body))

			stdin.Close()
			require.NoError(t, c.Wait(), stderr.String())
			_, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", hostPort))
			assert.Error(t, err, "nothing listens once the command is gone")
		})
	}
}

// A published host port another program holds fails the command's start
// with an error naming it; on the landlock rung, without a network
// namespace, publishing is refused.
func TestPublishRefusals(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	cfg := corral.Config{Workspace: realDir(t), Network: corral.NetworkNone, Publish: []string{strconv.Itoa(port)}}
	sb, _ := rungSandbox(t, corral.RungFull, cfg)
	err = sb.Command(t.Context(), "true").Run()
	var se *corral.SetupError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), fmt.Sprintf("127.0.0.1:%d", port))
	assert.Contains(t, err.Error(), "taken")

	t.Run("landlock", func(t *testing.T) {
		cfg := corral.Config{Workspace: realDir(t), Network: corral.NetworkNone, Publish: []string{"18099"}}
		sb, err := onRung(t, corral.RungLandlock, cfg)
		if sb != nil {
			sb.Close()
		}
		require.Error(t, err)
		assert.True(t, errors.As(err, &se), "%v", err)
		assert.Contains(t, err.Error(), "publishing a port needs a network namespace")
	})
}

// onRung is corral.New(cfg) on rung, skipping the test when the host
// cannot give that rung with all of its layers.
func onRung(t *testing.T, rung corral.Rung, cfg corral.Config) (*corral.Sandbox, error) {
	t.Helper()
	off := layRungLayers[rung]
	if len(off) > 0 {
		cfg.Fallback = corral.FallbackWarn
	}
	restore := testhook.Disable(off...)
	defer restore()
	r, err := corral.Doctor(corral.Config{Workspace: cfg.Workspace, Network: cfg.Network, Fallback: cfg.Fallback})
	require.NoError(t, err)
	if !r.OK || r.Rung != rung || len(layersWithout(r)) != len(off) {
		hosttest.Skipf(t, "this host cannot give rung %s with every layer: %s", rung, layMissing(r))
	}
	return corral.New(cfg)
}

func allowsOf(report []corral.Violation) []string {
	var out []string
	for _, v := range report {
		out = append(out, v.Allows())
	}
	return out
}
