package egress

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counts returns how many client connections the proxy counts against its
// cap, and how many over it it is answering.
func (p *Proxy) counts() (clients, refusing int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.clients), p.refusing
}

// waitCounts waits until the proxy counts clients connections and is
// refusing none: it counts a connection once it accepted it, which the
// client cannot see.
func waitCounts(t *testing.T, p *running, clients int) {
	t.Helper()
	require.Eventually(t, func() bool {
		c, r := p.counts()
		return c == clients && r == 0
	}, time.Minute, time.Millisecond, "the proxy's count of client connections")
}

func TestMaxConnsDefault(t *testing.T) {
	for _, tt := range []struct{ given, want int }{
		{0, DefaultMaxConns},
		{-1, 0},
		{3, 3},
	} {
		p, err := New(Options{MaxConns: tt.given})
		require.NoError(t, err)
		assert.Equal(t, tt.want, p.maxConns, "MaxConns %d", tt.given)
		require.NoError(t, p.Close())
	}
}

// TestMaxConns: with the cap's worth of connections open, through either
// side and idle or not, one more is refused with words naming the cap;
// once one closes, the same request goes through (the control).
func TestMaxConns(t *testing.T) {
	w := newWorld(t)
	echo := fmt.Sprintf("api.example:%d", w.echo)

	// Ways to hold a connection open; each returns it once the proxy
	// counts it.
	holds := map[string]func(t *testing.T, p *running) net.Conn{
		"CONNECT tunnel": func(t *testing.T, p *running) net.Conn {
			c, status, _ := p.connect(t, echo)
			require.NotNil(t, c, status)
			return c
		},
		"SOCKS5 tunnel": func(t *testing.T, p *running) net.Conn {
			c, err := p.socksDial(echo)
			require.NoError(t, err)
			return c
		},
		"idle HTTP": func(t *testing.T, p *running) net.Conn {
			c, err := net.Dial("tcp", p.httpAddr)
			require.NoError(t, err)
			return c
		},
		"idle SOCKS5": func(t *testing.T, p *running) net.Conn {
			c, err := net.Dial("tcp", p.socksAddr)
			require.NoError(t, err)
			return c
		},
	}
	// Requests over the cap; each reports whether it went through, and
	// the line it was refused with.
	asks := map[string]func(t *testing.T, p *running) (bool, string){
		"CONNECT": func(t *testing.T, p *running) (bool, string) {
			c, status, body := p.connect(t, echo)
			if c == nil {
				assert.Equal(t, "403 "+lineOf(body), status, "the reason phrase is the line too")
				return false, lineOf(body)
			}
			echoes(t, c)
			c.Close()
			return true, ""
		},
		"SOCKS5": func(t *testing.T, p *running) (bool, string) {
			c, err := p.socksDial(echo)
			if err != nil {
				assert.ErrorContains(t, err, "connection not allowed by ruleset")
				return false, ""
			}
			echoes(t, c)
			c.Close()
			return true, ""
		},
		"plain GET": func(t *testing.T, p *running) (bool, string) {
			code, body, err := get(p.httpClient(nil), fmt.Sprintf("http://api.example:%d/x", w.plain))
			require.NoError(t, err)
			return code == http.StatusOK, body
		},
	}
	for hname, hold := range holds {
		for aname, ask := range asks {
			t.Run(hname+" then "+aname, func(t *testing.T) {
				p := startProxy(t, Options{
					Rules:    mustRules(t, []string{"api.example"}, nil, loopback),
					Resolve:  w.resolver.resolve,
					MaxConns: 2,
				})
				var held []net.Conn
				for range 2 {
					held = append(held, hold(t, p))
					waitCounts(t, p, len(held))
				}
				ok, line := ask(t, p)
				require.False(t, ok, "a connection over the cap")
				via, port := "http", w.echo
				switch aname {
				case "SOCKS5":
					via = "socks5"
				case "plain GET":
					port = w.plain
				}
				want := Refusal{Host: "api.example", Port: port, Reason: reasonTooMany(2), Via: via}
				assert.Equal(t, []Refusal{want}, p.refusals.all())
				if line != "" {
					assert.Equal(t, fmt.Sprintf("corral: blocked api.example:%d (over the limit of 2 connections open through the proxy at once)", port), line)
				}

				held[0].Close()
				waitCounts(t, p, 1)
				ok, _ = ask(t, p)
				assert.True(t, ok, "control: below the cap the same request goes through")
				for _, c := range held[1:] {
					c.Close()
				}
				waitCounts(t, p, 0)
			})
		}
	}
}

// lineOf is a refusal body without its newline.
func lineOf(body string) string {
	if n := len(body); n > 0 && body[n-1] == '\n' {
		return body[:n-1]
	}
	return body
}

// TestMaxConnsRulesFirst: over the cap, a destination the rules refuse
// anyway is refused for that reason, which says more.
func TestMaxConnsRulesFirst(t *testing.T) {
	w := newWorld(t)
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, loopback), Resolve: w.resolver.resolve, MaxConns: 1})
	hold, err := net.Dial("tcp", p.httpAddr)
	require.NoError(t, err)
	defer hold.Close()
	waitCounts(t, p, 1)
	evil := fmt.Sprintf("evil.example:%d", w.echo)
	_, status, _ := p.connect(t, evil)
	assert.Equal(t, "403 corral: blocked "+evil+" (not in allowed domains)", status)
	_, err = p.socksDial(evil)
	assert.ErrorContains(t, err, "connection not allowed by ruleset")
	assert.Equal(t, []Refusal{
		{Host: "evil.example", Port: w.echo, Reason: reasonNotAllowed, Via: "http"},
		{Host: "evil.example", Port: w.echo, Reason: reasonNotAllowed, Via: "socks5"},
	}, p.refusals.all())
}

// TestMaxConnsFlood: connections over the cap that never say what they
// want hold at most maxRefusing descriptors; one more is closed at once,
// unanswered. When they go, nothing is left counted, and a request over
// the cap is answered again.
func TestMaxConnsFlood(t *testing.T) {
	w := newWorld(t)
	p := startProxy(t, Options{Rules: mustRules(t, []string{"api.example"}, nil, loopback), Resolve: w.resolver.resolve, MaxConns: 1})
	hold, err := net.Dial("tcp", p.httpAddr)
	require.NoError(t, err)
	defer hold.Close()
	waitCounts(t, p, 1)

	var silent []net.Conn
	for i := range maxRefusing {
		addr := p.httpAddr
		if i%2 == 1 {
			addr = p.socksAddr
		}
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		silent = append(silent, c)
	}
	require.Eventually(t, func() bool { _, r := p.counts(); return r == maxRefusing }, time.Minute, time.Millisecond)
	for _, addr := range []string{p.httpAddr, p.socksAddr} {
		extra, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		n, err := extra.Read(make([]byte, 1))
		assert.Equal(t, 0, n)
		assert.ErrorIs(t, err, io.EOF, "closed at once, unanswered")
		extra.Close()
	}
	for _, c := range silent {
		c.Close()
	}
	waitCounts(t, p, 1)
	assert.Empty(t, p.refusals.all(), "a connection that asked for nothing is no refusal")

	_, status, _ := p.connect(t, fmt.Sprintf("api.example:%d", w.echo))
	assert.Equal(t, fmt.Sprintf("403 corral: blocked api.example:%d (%s)", w.echo, reasonTooMany(1)), status)
}
