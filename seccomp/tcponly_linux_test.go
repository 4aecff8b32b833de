package seccomp

import (
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/hosttest"
)

const tcpOnlyChildEnv = "CORRAL_SECCOMP_TCPONLY_CHILD"

// inetProbes are the sockets a TCPOnly filter must tell apart.
var inetProbes = []struct {
	name           string
	af, typ, proto int
}{
	{"tcp4", unix.AF_INET, unix.SOCK_STREAM | unix.SOCK_CLOEXEC, 0},
	{"tcp6", unix.AF_INET6, unix.SOCK_STREAM | unix.SOCK_NONBLOCK, unix.IPPROTO_TCP},
	{"udp4", unix.AF_INET, unix.SOCK_DGRAM, 0},
	{"udp6", unix.AF_INET6, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, unix.IPPROTO_UDP},
	{"ping", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP},
	{"raw", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP},
	{"mptcp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP},
	{"sctp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP},
}

func TestTCPOnlyChild(t *testing.T) {
	mode := os.Getenv(tcpOnlyChildEnv)
	if mode == "" {
		t.Skip("runs only as the child of TestTCPOnly")
	}
	runtime.LockOSThread()
	if mode == "filter" {
		bpf, err := Filter(Options{TCPOnly: true})
		require.NoError(t, err)
		require.NoError(t, Load(bpf))
	}
	res := map[string]string{}
	for _, p := range inetProbes {
		fd, err := unix.Socket(p.af, p.typ, p.proto)
		res[p.name] = errnoName(err)
		if err == nil {
			unix.Close(fd)
		}
	}
	require.NoError(t, json.NewEncoder(os.Stdout).Encode(res))
}

func probeTCPOnly(t *testing.T, mode string) map[string]string {
	cmd := exec.Command(os.Args[0], "-test.run=^TestTCPOnlyChild$")
	cmd.Env = append(os.Environ(), tcpOnlyChildEnv+"="+mode)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var res map[string]string
	require.NoError(t, json.NewDecoder(bytesReader(out)).Decode(&res), "%s", out)
	return res
}

func TestTCPOnly(t *testing.T) {
	if ok, why := Available(); !ok {
		hosttest.Skip(t, "no seccomp filters here: "+why)
	}
	// The control: without the filter UDP sockets are made.
	plain := probeTCPOnly(t, "none")
	require.Equal(t, "ok", plain["udp4"])
	require.Equal(t, "ok", plain["udp6"])
	got := probeTCPOnly(t, "filter")
	assert.Equal(t, "ok", got["tcp4"])
	assert.Equal(t, "ok", got["tcp6"])
	for _, name := range []string{"udp4", "udp6", "ping", "raw", "mptcp", "sctp"} {
		assert.Equal(t, "EACCES", got[name], name)
	}
}
