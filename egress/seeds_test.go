package egress

import (
	"bytes"
	"io"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/fuzzseed"
)

// TestFuzzSeeds records what real clients send a proxy (curl through the
// HTTP proxy and SOCKS5, git through the HTTP proxy) as seed inputs of
// FuzzHTTPProxy and FuzzSOCKS5 (scripts/fuzz-corpus.sh).
func TestFuzzSeeds(t *testing.T) {
	fuzzseed.Enabled(t)
	for _, c := range []struct {
		target, name string
		socks        bool
		argv         []string
	}{
		{"FuzzHTTPProxy", "curl-connect", false, []string{"curl", "-sS", "-m", "3", "-x", "http://PROXY", "https://allowed.test/x"}},
		{"FuzzHTTPProxy", "curl-absolute", false, []string{"curl", "-sS", "-m", "3", "-x", "http://PROXY", "-d", "a=1", "http://allowed.test:8080/p?q=1"}},
		{"FuzzHTTPProxy", "git-absolute", false, []string{"git", "-c", "http.proxy=http://PROXY", "ls-remote", "http://allowed.test/r.git"}},
		{"FuzzSOCKS5", "curl-socks5h", true, []string{"curl", "-sS", "-m", "3", "-x", "socks5h://PROXY", "https://a.ok.test/"}},
		{"FuzzSOCKS5", "curl-socks5", true, []string{"curl", "-sS", "-m", "3", "-x", "socks5://PROXY", "http://192.0.2.7:22/"}},
	} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		got := make(chan []byte, 1)
		go func() { got <- record(l, c.socks) }()
		argv := append([]string(nil), c.argv...)
		for i, a := range argv {
			argv[i] = string(bytes.ReplaceAll([]byte(a), []byte("PROXY"), []byte(l.Addr().String())))
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + t.TempDir()}
		cmd.Run() // it fails: nothing answers beyond the handshake
		l.Close()
		b := <-got
		require.NotEmpty(t, b, c.name)
		fuzzseed.Write(t, c.target, c.name, b)
	}
}

// record reads what the first client on l sends until it is quiet for a
// second; a SOCKS5 client is first told no authentication is needed.
func record(l net.Listener, socks bool) []byte {
	c, err := l.Accept()
	if err != nil {
		return nil
	}
	defer c.Close()
	var buf bytes.Buffer
	if socks {
		hdr := make([]byte, 2)
		if _, err := io.ReadFull(c, hdr); err != nil {
			return nil
		}
		methods := make([]byte, hdr[1])
		io.ReadFull(c, methods)
		buf.Write(hdr)
		buf.Write(methods)
		c.Write([]byte{5, 0})
	}
	p := make([]byte, 64<<10)
	for {
		c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(p)
		buf.Write(p[:n])
		if err != nil {
			return buf.Bytes()
		}
	}
}
