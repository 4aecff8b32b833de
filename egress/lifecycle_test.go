package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetRules: connections made after SetRules use the new rules, also
// the next request on an HTTP keep-alive connection; a tunnel already
// open stays open.
func TestSetRules(t *testing.T) {
	w := newWorld(t)
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, loopback), Resolve: w.resolver.resolve})
	target := fmt.Sprintf("api.example:%d", w.echo)
	tunnel, status, _ := p.connect(t, target)
	require.NotNil(t, tunnel, status)
	echoes(t, tunnel)

	keep, err := net.Dial("tcp", p.httpAddr)
	require.NoError(t, err)
	defer keep.Close()
	br := bufio.NewReader(keep)
	plain := func() (int, string) {
		u := fmt.Sprintf("http://api.example:%d/", w.plain)
		fmt.Fprintf(keep, "GET %s HTTP/1.1\r\nHost: api.example\r\n\r\n", u)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		return resp.StatusCode, readBody(t, resp)
	}
	code, _ := plain()
	require.Equal(t, 200, code)

	p.SetRules(mustRules(t, []string{"ok.example"}, nil, loopback))
	_, status, _ = p.connect(t, target)
	assert.Equal(t, "403 corral: blocked "+target+" (not in allowed domains)", status)
	_, err = p.socksDial(target)
	assert.ErrorContains(t, err, "connection not allowed by ruleset")
	code, body := plain()
	assert.Equal(t, 403, code)
	assert.Equal(t, fmt.Sprintf("corral: blocked api.example:%d (not in allowed domains)", w.plain), body)
	c, err := p.socksDial(fmt.Sprintf("ok.example:%d", w.echo))
	require.NoError(t, err)
	echoes(t, c)
	c.Close()

	echoes(t, tunnel)
	tunnel.Close()

	p.SetRules(nil)
	_, status, _ = p.connect(t, fmt.Sprintf("ok.example:%d", w.echo))
	assert.Equal(t, fmt.Sprintf("403 corral: blocked ok.example:%d (not in allowed domains)", w.echo), status)
}

// TestSetRulesConcurrent swaps the rules while clients connect; run with
// -race.
func TestSetRulesConcurrent(t *testing.T) {
	w := newWorld(t)
	a := mustRules(t, []string{"api.example"}, nil, loopback)
	b := mustRules(t, []string{"api.example", "ok.example"}, nil, loopback)
	p := startProxy(t, Options{Rules: a, Resolve: w.resolver.resolve})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p.SetRules([]*Rules{a, b}[i%2])
		}
	}()
	for i := 0; i < 20; i++ {
		c, err := p.socksDial(fmt.Sprintf("api.example:%d", w.echo))
		require.NoError(t, err)
		echoes(t, c)
		c.Close()
	}
	close(stop)
	wg.Wait()
}

// TestClose: Close ends every tunnel and keep-alive connection, both
// Serve calls return nil (checked by startProxy), and no goroutine of the
// proxy's is left.
func TestClose(t *testing.T) {
	w := newWorld(t)
	before := runtime.NumGoroutine()
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, loopback), Resolve: w.resolver.resolve})
	target := fmt.Sprintf("api.example:%d", w.echo)
	var clients []net.Conn
	for i := 0; i < 3; i++ {
		c, status, _ := p.connect(t, target)
		require.NotNil(t, c, status)
		echoes(t, c)
		clients = append(clients, c)
		c, err := p.socksDial(target)
		require.NoError(t, err)
		echoes(t, c)
		clients = append(clients, c)
	}
	keep, err := net.Dial("tcp", p.httpAddr)
	require.NoError(t, err)
	fmt.Fprintf(keep, "GET http://api.example:%d/ HTTP/1.1\r\nHost: api.example\r\n\r\n", w.plain)
	resp, err := http.ReadResponse(bufio.NewReader(keep), nil)
	require.NoError(t, err)
	readBody(t, resp)
	clients = append(clients, keep)
	half, err := net.Dial("tcp", p.socksAddr) // mid-handshake
	require.NoError(t, err)
	clients = append(clients, half)

	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "a second Close is harmless")
	for i, c := range clients {
		_, err := io.ReadAll(c)
		assert.NoError(t, err, "client %d sees the end", i)
		c.Close()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	assert.NoError(t, p.ServeSOCKS5(l), "serving after Close returns at once")
	assert.NoError(t, p.ServeHTTPProxy(l))
	_, err = l.Accept()
	assert.ErrorIs(t, err, net.ErrClosed, "and closes the listener")

	// Goroutines of closed connections end asynchronously in net/http;
	// wait for them rather than time them.
	require.Eventually(t, func() bool { return runtime.NumGoroutine() <= before+2 }, 10*time.Second, 10*time.Millisecond,
		"goroutines: %d before, %d after", before, runtime.NumGoroutine())
}

// TestSOCKS5Protocol covers the parts of SOCKS5 no ordinary client uses:
// BIND and UDP ASSOCIATE are refused as unsupported commands, a client
// that offers only authentication is told no method is acceptable, and an
// unknown address type is answered as such.
func TestSOCKS5Protocol(t *testing.T) {
	w := newWorld(t)
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, loopback), Resolve: w.resolver.resolve})
	exchange := func(greeting, request []byte, replyLen int) []byte {
		c, err := net.Dial("tcp", p.socksAddr)
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Write(greeting)
		require.NoError(t, err)
		method := make([]byte, 2)
		_, err = io.ReadFull(c, method)
		require.NoError(t, err)
		if method[1] != 0 {
			return method
		}
		_, err = c.Write(request)
		require.NoError(t, err)
		reply := make([]byte, replyLen)
		_, err = io.ReadFull(c, reply)
		require.NoError(t, err)
		if reply[1] != 0 {
			rest, err := io.ReadAll(c)
			require.NoError(t, err, "a refusal ends the connection cleanly")
			assert.Empty(t, rest)
		}
		return reply
	}
	name := []byte{3, byte(len("api.example"))}
	name = append(name, "api.example"...)
	name = append(name, byte(w.echo>>8), byte(w.echo))
	noAuth := []byte{5, 1, 0}

	assert.Equal(t, []byte{5, 0xff}, exchange([]byte{5, 1, 2}, nil, 2), "username/password only")
	for cmd, what := range map[byte]string{2: "BIND", 3: "UDP ASSOCIATE", 9: "an unknown command"} {
		reply := exchange(noAuth, append([]byte{5, cmd, 0}, name...), 10)
		assert.Equal(t, []byte{5, 7, 0, 1, 0, 0, 0, 0, 0, 0}, reply, what)
		assert.Contains(t, p.refusals.all(), Refusal{Host: "api.example", Port: w.echo, Reason: "SOCKS5 " + what + " is not supported, only CONNECT", Via: "socks5"})
	}
	assert.Equal(t, []byte{5, 8, 0, 1, 0, 0, 0, 0, 0, 0}, exchange(noAuth, []byte{5, 1, 0, 9, 1, 2}, 10), "unknown address type")
	reply := exchange(noAuth, append([]byte{5, 1, 0}, name...), 10)
	assert.Equal(t, []byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}, reply, "control: CONNECT succeeds")
	// IPv6 literal, ATYP 4, not allowed.
	v6 := append([]byte{5, 1, 0, 4}, make([]byte, 15)...)
	v6 = append(v6, 1, byte(w.echo>>8), byte(w.echo))
	assert.Equal(t, []byte{5, 2, 0, 1, 0, 0, 0, 0, 0, 0}, exchange(noAuth, v6, 10), "::1 is refused by the ruleset")
}

// TestHalfClose: a client that sends its request and shuts down its
// writing side, then waits for the answer (as `nc -N` and some RPC
// clients do), gets it through either side: the end of its stream
// reaches the server as an end, not as a closed connection.
func TestHalfClose(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
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
				got, _ := io.ReadAll(c) // to the client's end
				fmt.Fprintf(c, "got %d bytes", len(got))
			}()
		}
	}()
	p := startProxy(t, Options{Rules: mustRules(t, nil, nil, []string{"127.0.0.1"})})
	dials := map[string]func() (net.Conn, error){
		"direct": func() (net.Conn, error) { return net.Dial("tcp", l.Addr().String()) },
		"connect": func() (net.Conn, error) {
			c, status, _ := p.connect(t, l.Addr().String())
			return c, errIf(c == nil, status)
		},
		"socks5": func() (net.Conn, error) { return p.socksDial(l.Addr().String()) },
	}
	for name, dial := range dials {
		c, err := dial()
		require.NoError(t, err, name)
		_, err = io.WriteString(c, "hello")
		require.NoError(t, err)
		require.NoError(t, c.(*net.TCPConn).CloseWrite(), name)
		answer, err := io.ReadAll(c)
		require.NoError(t, err, name)
		assert.Equal(t, "got 5 bytes", string(answer), name)
		c.Close()
	}
}
