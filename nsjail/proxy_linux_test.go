package nsjail

import (
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// greeter serves the sandbox's listeners from the test process: each
// connection to the first gets "via the caller". Its Serve names the ports
// in PROXY_PORT and SOCKS_PORT and counts the releases.
type greeter struct {
	released atomic.Int32
}

func (g *greeter) serve(files []*os.File, env []string) ([]string, func(), error) {
	var ls []net.Listener
	for _, f := range files {
		l, err := net.FileListener(f)
		if err != nil {
			return nil, nil, err
		}
		ls = append(ls, l)
	}
	go func() {
		for {
			c, err := ls[0].Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "via the caller\n")
			c.Close()
		}
	}()
	env = append(env,
		"PROXY_PORT="+strconv.Itoa(ls[0].Addr().(*net.TCPAddr).Port),
		"SOCKS_PORT="+strconv.Itoa(ls[1].Addr().(*net.TCPAddr).Port))
	return env, func() {
		g.released.Add(1)
		for _, l := range ls {
			l.Close()
		}
	}, nil
}

// startServing is start with Serve set.
func startServing(t *testing.T, j *Jail, serve func([]*os.File, []string) ([]string, func(), error), script string) (string, error) {
	t.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	require.NoError(t, err)
	defer null.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	p, err := j.Start(&Command{Path: "/bin/bash", Args: []string{"bash", "-c", script},
		Env: []string{"PATH=/usr/bin:/bin"}, Stdio: [3]*os.File{null, w, w}, Serve: serve})
	w.Close()
	if err != nil {
		return "", err
	}
	b, _ := io.ReadAll(r)
	ex, err := p.Wait()
	require.NoError(t, err)
	if ex.Status.ExitStatus() != 0 {
		return string(b), assert.AnError
	}
	return string(b), nil
}

func TestNetProxyListenersReachTheCaller(t *testing.T) {
	for _, o := range []Options{{NetProxy: true, Ahead: 1}, {NetProxy: true, Direct: true, Ahead: 1}, {NetProxy: true}} {
		j := newJail(t, o)
		g := &greeter{}
		for range 2 { // a sandbox built ahead, then its replacement
			out, err := startServing(t, j, g.serve, `exec 3<>/dev/tcp/127.0.0.1/$PROXY_PORT && cat <&3`)
			require.NoError(t, err, out)
			assert.Equal(t, "via the caller\n", out)
		}
		assert.Equal(t, int32(2), g.released.Load(), "each sandbox's serving ends when it is released")
	}
}

func TestNetProxySandboxHasOnlyLoopback(t *testing.T) {
	// A server on the host's loopback: reachable from here (the control),
	// not from inside, whose 127.0.0.1 is its own.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "host\n")
			c.Close()
		}
	}()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	c, err := net.Dial("tcp4", "127.0.0.1:"+port)
	require.NoError(t, err, "control: the host's server answers on the host")
	c.Close()

	j := newJail(t, Options{NetProxy: true})
	g := &greeter{}
	out, err := startServing(t, j, g.serve, `
		exec 3<>/dev/tcp/127.0.0.1/`+port+` && echo reached host loopback
		exec 4<>/dev/tcp/10.0.0.1/80 && echo reached 10.0.0.1
		ip -o link 2>/dev/null | grep -v ': lo:' && echo other links
		# the listeners' ports are taken: the command cannot serve in their place
		python3 -c "import socket,os; s=socket.socket(); s.bind(('127.0.0.1', int(os.environ['PROXY_PORT'])))" 2>/dev/null && echo bound the proxy port
		true`)
	require.NoError(t, err, out)
	assert.NotContains(t, out, "reached")
	assert.NotContains(t, out, "other links")
	assert.NotContains(t, out, "bound the proxy port")
}

func TestNetProxyNeedsServe(t *testing.T) {
	j := newJail(t, Options{NetProxy: true})
	_, err := startServing(t, j, nil, `true`)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, LayerNetNS, e.Layer)
}
