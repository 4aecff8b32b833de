package cli

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	capFile := filepath.Join(ws, "cap.toml")
	require.NoError(t, os.WriteFile(capFile, []byte("[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \"allow\"\nproxy_connections = 0\n"), 0o644))
	hostFile := filepath.Join(ws, "host.toml")
	require.NoError(t, os.WriteFile(hostFile, []byte("[[agents]]\nid = \"a\"\n[agents.sandbox]\nallowed_domains = [\"example.com\"]\n"), 0o644))
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		// The CLI speaks in flags, or in the file's keys for a value read
		// from the file, never in the library's field names.
		{"domain in the file without network allow", []string{"run", "--config", hostFile, "--", "true"}, `agents[0].sandbox.allowed_domains: needs network = "allow"`},
		{"reveal of no store", []string{"run", "--reveal", "/nonexistent-store", "--", "true"}, "covers none of the credential stores hidden by default (see 'corral profile')"},
		{"domain without --net allow", []string{"run", "--allow-domain", "example.com", "--", "true"}, `--allow-domain example.com: needs --net allow`},
		{"bad domain", []string{"run", "--net", "allow", "--allow-domain", "bad name", "--", "true"}, "--allow-domain bad name: "},
		{"bad denied domain", []string{"run", "--net", "allow", "--deny-domain", "*.", "--", "true"}, "--deny-domain *.: "},
		{"bad range", []string{"run", "--net", "allow", "--allow-ip", "10.0.0.0/33", "--", "true"}, "--allow-ip 10.0.0.0/33: "},
		{"bad entry in the file", []string{"run", "--config", file, "--", "true"}, `allowed_domains[0]: "bad name"`},
		{"cap without --net allow", []string{"run", "--proxy-connections", "5", "--", "true"}, `--proxy-connections 5: needs --net allow`},
		{"cap of zero", []string{"run", "--net", "allow", "--proxy-connections", "0", "--", "true"}, `--proxy-connections "0": want a number above zero, or none`},
		{"negative cap", []string{"run", "--net", "allow", "--proxy-connections", "-1", "--", "true"}, `--proxy-connections "-1": want a number above zero, or none`},
		{"cap not a number", []string{"run", "--net", "allow", "--proxy-connections", "many", "--", "true"}, `--proxy-connections "many": want a number above zero, or none`},
		{"bad cap in the file", []string{"run", "--config", capFile, "--", "true"}, `proxy_connections: "0": want a number above zero, or none`},
		{"host port with --net host", []string{"run", "--allow-host-port", "11434", "--", "true"}, `--allow-host-port 11434: needs --net none or allow: with --net host the host's loopback is the command's own`},
		{"UDP host port", []string{"run", "--net", "none", "--allow-host-port", "53/udp", "--", "true"}, `--allow-host-port "53/udp": UDP is not forwarded: host ports carry TCP only`},
		{"publish with --net host", []string{"run", "--publish", "3000", "--", "true"}, `--publish 3000: needs --net none or allow`},
		{"publish on every address", []string{"run", "--net", "none", "--publish", "0.0.0.0:3000", "--", "true"}, `--publish 0.0.0.0:3000: host address 0.0.0.0 is not loopback: other machines could reach the command's server; --publish-any allows it`},
		{"bad publish", []string{"run", "--net", "none", "--publish", "x:3000", "--", "true"}, `--publish x:3000: host port "x": want a port from 1 to 65535`},
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

// --proxy-connections reaches the command's proxy: with a cap of one, a
// connection held open leaves none for curl, which is answered with the
// limit. curl is sent through the proxy to the test's server on the
// host's loopback, which NO_PROXY would otherwise keep direct.
func TestRunProxyConnectionsCapsTheProxy(t *testing.T) {
	sandboxtest.Require(t, corral.Config{Network: corral.NetworkAllow})
	for _, tool := range []string{"curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is needed: " + err.Error())
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello through the proxy\n")
	}))
	t.Cleanup(srv.Close)
	ws := workspace(t)
	script := `import os, socket, subprocess
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
held = socket.create_connection(("127.0.0.1", port))
subprocess.run("curl -sS --noproxy '' ` + srv.URL + `/", shell=True)`
	run := func(cap string) string {
		stdout, stderr, code := cli(t, ws, "run", "--net", "allow", "--allow-ip", "127.0.0.1/32", "--proxy-connections", cap,
			"--", "python3", "-c", script)
		require.Equal(t, 0, code, "stderr: %s", stderr)
		return stdout
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	// The control: with room for two, curl gets its page.
	assert.Contains(t, run("2"), "hello through the proxy")
	assert.Contains(t, run("1"), "corral: blocked "+host+" (over the limit of 1 connections open through the proxy at once)")
}

func TestProfileAndDoctorShowTheNetworkPolicy(t *testing.T) {
	ws := workspace(t)
	capFile := filepath.Join(ws, "cap.toml")
	require.NoError(t, os.WriteFile(capFile, []byte("[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \"allow\"\nproxy_connections = 7\n"), 0o644))
	stdout, stderr, code := cli(t, ws, "profile", "--platform", "linux", "--net", "allow",
		"--allow-domain", "github.com", "--deny-domain", "gist.github.com", "--allow-ip", "10.0.0.0/8")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "network: allow, through corral's HTTP and SOCKS5 proxy")
	assert.Contains(t, stdout, "allowed domains: github.com")
	assert.Contains(t, stdout, "denied domains (win over allowed): gist.github.com")
	assert.Contains(t, stdout, "allowed IP ranges: 10.0.0.0/8")
	assert.Contains(t, stdout, "connections through the proxy: at most 256 open at once, more are refused")
	assert.Contains(t, stdout, "loopback only; the only way out is corral's proxy")

	for _, tc := range []struct{ args, want string }{
		{"--proxy-connections 12", "at most 12 open at once"},
		{"--proxy-connections none", "connections through the proxy: no limit"},
		{"--config " + capFile, "at most 7 open at once"},
		{"--config " + capFile + " --proxy-connections 9", "at most 9 open at once"},
	} {
		args := append([]string{"profile", "--platform", "linux", "--net", "allow"}, strings.Fields(tc.args)...)
		stdout, stderr, code := cli(t, ws, args...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, tc.want, tc.args)
	}

	stdout, _, code = cli(t, ws, "profile", "--platform", "darwin", "--net", "allow", "--allow-domain", "github.com")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, `(allow network-outbound (remote ip "localhost:PORT"))`)
	assert.NotContains(t, stdout, `(remote ip "*:*")`)

	stdout, _, _ = cli(t, ws, "doctor", "--net", "allow", "--fallback", "warn")
	assert.Contains(t, stdout, "net:   allow: ")
}

// A rule names the other setting as the user passed it, not only the
// canonical path the library compared: the workspace given through a
// symlink is named by its flag and value.
func TestRunRulesNameWhatWasPassed(t *testing.T) {
	base := workspace(t)
	real := filepath.Join(base, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.Symlink("real", filepath.Join(base, "link")))
	_, stderr, code := cli(t, base, "run", "--workspace", "link", "--hide", base, "--", "true")
	assert.Equal(t, exitUsage, code, stderr)
	assertOneLine(t, stderr, "--hide "+base+": contains --workspace link ("+real+"), which is also configured")
	_, stderr, code = cli(t, real, "run", "--hide", base, "--", "true")
	assert.Equal(t, exitUsage, code, stderr)
	assertOneLine(t, stderr, "contains the workspace "+real+" (the current directory)")
}

// A published host port another program holds fails the run with one
// line naming it (exit 125); a free one is announced, marked, on stderr
// once the command's server listens.
func TestRunPublish(t *testing.T) {
	sandboxtest.Require(t, corral.Config{Network: corral.NetworkNone})
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 serves inside: " + err.Error())
	}
	ws := workspace(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	port := strconv.Itoa(held.Addr().(*net.TCPAddr).Port)
	_, stderr, code := cli(t, ws, "run", "--net", "none", "--publish", port, "--", "true")
	assert.Equal(t, 125, code, stderr)
	assertOneLine(t, stderr, "publish 127.0.0.1:"+port+": the host's port is taken by another program")

	held.Close()
	script := `python3 -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 8000))
s.listen()
c, _ = s.accept()
c.sendall(b"hello from inside\n")
'`
	done := make(chan struct{})
	var out, errOut string
	go func() {
		defer close(done)
		out, errOut, code = cli(t, ws, "run", "--net", "none", "--publish", port+":8000", "--", "sh", "-c", script)
	}()
	var got []byte
	for got == nil {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			got, _ = io.ReadAll(c)
			c.Close()
			if len(got) == 0 {
				got = nil // reached before the server listened: the relay found nothing
			}
		}
		select {
		case <-done:
			require.FailNow(t, "the command ended", "%s %s", out, errOut)
		default:
		}
	}
	<-done
	assert.Equal(t, "hello from inside\n", string(got))
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "corral: published http://127.0.0.1:"+port+" (port 8000 inside)")
}

// corral profile shows the host ports and published ports, from the flags
// and from --config's agent alike.
func TestProfileShowsHostPorts(t *testing.T) {
	ws := workspace(t)
	file := filepath.Join(ws, "agents.toml")
	require.NoError(t, os.WriteFile(file, []byte("[[agents]]\nid = \"a\"\n[agents.sandbox]\nnetwork = \"none\"\nhost_ports = [11434]\npublish = [\"8080:3000\"]\n"), 0o644))
	for _, args := range [][]string{
		{"profile", "--platform", "linux", "--net", "none", "--allow-host-port", "11434", "--publish", "8080:3000"},
		{"profile", "--platform", "linux", "--config", file, "--agent", "a"},
	} {
		out, stderr, code := cli(t, ws, args...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, out, "host ports (localhost:PORT reaches the host's loopback, TCP only): 11434", args)
		assert.Contains(t, out, "published: http://127.0.0.1:8080 on the host reaches port 3000 inside, while the command runs", args)
	}
}
