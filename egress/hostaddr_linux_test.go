package egress

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const netnsChildEnv = "CORRAL_EGRESS_TEST_NETNS"

// TestHostAddrsRefused runs TestHostAddrsInNetns in a user and network
// namespace of the test's own, where it may give the loopback interface
// an address outside every special-purpose range, as a host's eth0 has.
func TestHostAddrsRefused(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostAddrsInNetns$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), netnsChildEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestHostAddrsInNetns", "%s", out)
}

// TestHostAddrsInNetns: a name that resolves to an address of the host's
// own interfaces reaches, without the check, a service bound to every
// address (0.0.0.0); the proxy refuses it, unless an allowed range names
// it, and refuses an address given to an interface after it started
// from the next connection on.
func TestHostAddrsInNetns(t *testing.T) {
	if os.Getenv(netnsChildEnv) == "" {
		t.Skip("run by TestHostAddrsRefused, in a network namespace of its own")
	}
	ip := func(args ...string) {
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %v: %s", args, out)
	}
	ip("link", "set", "lo", "up")
	ip("addr", "add", "1.2.3.4/32", "dev", "lo")
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 64)
				n, _ := c.Read(b)
				c.Write(b[:n])
			}()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	names := mapResolver{"own.example": {"1.2.3.4"}, "new.example": {"1.2.3.5"}}
	rules := []string{"own.example", "new.example"}
	own := fmt.Sprintf("own.example:%d", port)

	// The controls: the service answers at the host's address, and
	// through a proxy whose allowed range names that address.
	c, err := net.Dial("tcp", net.JoinHostPort("1.2.3.4", strconv.Itoa(port)))
	require.NoError(t, err)
	echoes(t, c)
	c.Close()
	open := startProxy(t, Options{Rules: mustRules(t, rules, nil, []string{"1.2.3.4/32"}), Resolve: names.resolve})
	c, status, _ := open.connect(t, own)
	require.NotNil(t, c, "control: %s", status)
	echoes(t, c)
	c.Close()

	p := startProxy(t, Options{Rules: mustRules(t, rules, nil, nil), Resolve: names.resolve})
	_, status, _ = p.connect(t, own)
	assert.Equal(t, "403 corral: blocked "+own+" (resolves to 1.2.3.4, which is an address of this host and not in allowed IPs)", status)
	_, err = p.socksDial(own)
	assert.Error(t, err)

	// Not an address of the host yet: dialled (and unreachable here).
	added := fmt.Sprintf("new.example:%d", port)
	_, status, _ = p.connect(t, added)
	assert.Equal(t, "502 Bad Gateway", status)
	ip("addr", "add", "1.2.3.5/32", "dev", "lo")
	_, status, _ = p.connect(t, added)
	assert.Equal(t, "403 corral: blocked "+added+" (resolves to 1.2.3.5, which is an address of this host and not in allowed IPs)", status)
	assert.Len(t, p.refusals.all(), 3)
}
