package egress

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// pipeFDs counts this process's open descriptors that are pipes.
func pipeFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "pipe:") {
			n++
		}
	}
	return n
}

// copyEcho echoes every connection with read and write, so that it holds
// no pipe of its own; it returns its port.
func copyEcho(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				buf := make([]byte, 32<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
		}
	})
	return l.Addr().(*net.TCPAddr).Port
}

// ioCopyForward forwards every connection to port with io.Copy both ways:
// the relay the proxy does not use, as the control of pipe counting.
func ioCopyForward(t *testing.T, port int) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			wg.Go(func() { io.Copy(s, c) })
			wg.Go(func() { io.Copy(c, s) })
		}
	})
	return l.Addr().String()
}

// TestIdleTunnelsHoldNoPipes: a tunnel that carried bytes and is idle
// holds no pipe; the kernel counts every pipe's capacity against the
// user's limit, past which all of the user's new pipes are small. The
// control: io.Copy between the same connections holds a pipe per
// direction for as long as they last.
func TestIdleTunnelsHoldNoPipes(t *testing.T) {
	const tunnels = 40
	echo := copyEcho(t)
	open := func(dial func() net.Conn) int {
		before := pipeFDs(t)
		for range tunnels {
			c := dial()
			t.Cleanup(func() { c.Close() })
			echoes(t, c)
		}
		return pipeFDs(t) - before
	}

	fwd := ioCopyForward(t, echo)
	held := open(func() net.Conn {
		c, err := net.Dial("tcp", fwd)
		require.NoError(t, err)
		return c
	})
	require.GreaterOrEqual(t, held, 2*tunnels, "control: io.Copy holds a pipe (two descriptors) per idle connection")

	p := startProxy(t, Options{
		Rules:   mustRules(t, []string{"echo.example"}, nil, loopback),
		Resolve: mapResolver{"echo.example": {"127.0.0.1"}}.resolve,
	})
	held = open(func() net.Conn {
		c, status, _ := p.connect(t, fmt.Sprintf("echo.example:%d", echo))
		require.NotNil(t, c, status)
		return c
	})
	assert.LessOrEqual(t, held, 2*cap(freePipes), "only the pipes kept for reuse stay open")
}

// TestTunnelCarriesEveryByte sends 16 MiB each way at once through a
// tunnel to an echo server, the client reading in small pieces so that
// the proxy's writes meet full socket buffers, and compares what came
// back.
func TestTunnelCarriesEveryByte(t *testing.T) {
	echo := copyEcho(t)
	p := startProxy(t, Options{
		Rules:   mustRules(t, []string{"echo.example"}, nil, loopback),
		Resolve: mapResolver{"echo.example": {"127.0.0.1"}}.resolve,
	})
	for _, via := range []string{"http", "socks5"} {
		t.Run(via, func(t *testing.T) {
			var c net.Conn
			addr := fmt.Sprintf("echo.example:%d", echo)
			if via == "http" {
				var status string
				c, status, _ = p.connect(t, addr)
				require.NotNil(t, c, status)
			} else {
				var err error
				c, err = p.socksDial(addr)
				require.NoError(t, err)
			}
			defer c.Close()
			data := make([]byte, 16<<20)
			rand.Read(data)
			errs := make(chan error, 1)
			go func() {
				_, err := io.Copy(c, bytes.NewReader(data))
				if err == nil {
					err = c.(interface{ CloseWrite() error }).CloseWrite()
				}
				errs <- err
			}()
			h := sha256.New()
			buf := make([]byte, 1500)
			n, err := io.CopyBuffer(h, struct{ io.Reader }{c}, buf)
			require.NoError(t, err)
			require.NoError(t, <-errs)
			assert.Equal(t, int64(len(data)), n)
			assert.Equal(t, sha256.Sum256(data), [32]byte(h.Sum(nil)))
		})
	}
}

// TestPipeSizes: pipes are big within the budget, the kernel's default
// size beyond it; given back, big ones are kept for the next transfer and
// the others closed.
func TestPipeSizes(t *testing.T) {
	for len(freePipes) > 0 {
		(<-freePipes).close()
	}
	require.Zero(t, bigOpen.Load(), "no transfer in flight")
	budget := bigBudget
	bigBudget = func() int { return 2 }
	defer func() { bigBudget = budget }()

	var got []*spipe
	for range 4 {
		p, err := getPipe()
		require.NoError(t, err)
		got = append(got, p)
	}
	for i, p := range got {
		size, err := unix.FcntlInt(uintptr(p.r), unix.F_GETPIPE_SZ, 0)
		require.NoError(t, err)
		if i >= 2 {
			assert.False(t, p.big, i)
			assert.LessOrEqual(t, size, 64<<10, "the default size, or less past the user's limit")
			continue
		}
		assert.True(t, p.big, i)
		// An unprivileged user past its pipe limit (its other processes
		// count) is refused the size; root never is.
		if os.Geteuid() == 0 {
			assert.Equal(t, bigPipeSize, size)
		}
	}
	for _, p := range got {
		putPipe(p)
	}
	assert.Equal(t, 2, len(freePipes), "the big ones are kept")
	assert.Equal(t, int64(2), bigOpen.Load())
}

// TestPipeBudget: where the kernel counts the process's pipes, big ones
// take at most a quarter of the user's soft limit; root's are not counted.
func TestPipeBudget(t *testing.T) {
	raw, err := os.ReadFile("/proc/sys/fs/pipe-user-pages-soft")
	require.NoError(t, err)
	var soft int
	_, err = fmt.Sscan(string(raw), &soft)
	require.NoError(t, err)
	switch {
	case soft == 0 || privilegedPipes():
		assert.Equal(t, -1, pipeBudget())
	default:
		assert.Equal(t, soft/4/(bigPipeSize/os.Getpagesize()), pipeBudget())
	}
	if os.Geteuid() != 0 {
		assert.False(t, privilegedPipes(), "the test user holds no capability")
	}
}
