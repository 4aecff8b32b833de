package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flipResolver answers each lookup with the next of its answers, the way
// a hostile DNS server with a zero TTL does, and counts the lookups.
type flipResolver struct {
	mu      sync.Mutex
	answers []string
	calls   int
}

func (f *flipResolver) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.answers[f.calls%len(f.answers)]
	f.calls++
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

func (f *flipResolver) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// dialLog records the addresses the proxy dials. Only loopback is
// reachable in the tests: any other dial fails at once, as an unreachable
// network would, instead of waiting for a timeout.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

var errUnreachable = errors.New("test network: only loopback is reachable")

func (d *dialLog) control(_, address string, _ syscall.RawConn) error {
	d.mu.Lock()
	d.addrs = append(d.addrs, address)
	d.mu.Unlock()
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().IsLoopback() {
		return errUnreachable
	}
	return nil
}

func (d *dialLog) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// TestDNSRebinding: a name whose answer flips between a public address
// and loopback never gets the proxy to dial loopback. Each connection
// resolves the name once and dials only what that lookup returned, so
// the address checked is the address dialled: a proxy that checked one
// answer and dialled after another lookup would reach 127.0.0.1 on the
// first connection. The control allows loopback and the same flip then
// reaches the server.
func TestDNSRebinding(t *testing.T) {
	echo := echoServer(t)
	target := fmt.Sprintf("flip.example:%d", echo)
	for _, tt := range []struct {
		name  string
		ips   []string
		works bool
	}{
		{"loopback refused", nil, false},
		{"control: loopback allowed", loopback, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			flip := &flipResolver{answers: []string{"8.8.8.8", "127.0.0.1"}}
			p := startProxy(t, Options{Rules: mustRules(t, []string{"flip.example"}, nil, tt.ips), Resolve: flip.resolve})
			dials := &dialLog{}
			p.dialer.Control = dials.control

			// First lookup: the public address, dialled, unreachable here.
			c, status, body := p.connect(t, target)
			require.Nil(t, c)
			assert.Equal(t, "502 Bad Gateway", status)
			assert.Contains(t, body, "corral: cannot reach "+target)
			// Second lookup: loopback.
			c, status, body = p.connect(t, target)
			if tt.works {
				require.NotNil(t, c, status)
				echoes(t, c)
				c.Close()
			} else {
				require.Nil(t, c)
				assert.Equal(t, "403 corral: blocked "+target+" (resolves to 127.0.0.1, which is loopback and not in allowed IPs)", status)
				assert.Equal(t, "corral: blocked "+target+" (resolves to 127.0.0.1, which is loopback and not in allowed IPs)\n", body)
			}
			assert.Equal(t, 2, flip.count(), "one lookup per connection")
			want := []string{fmt.Sprintf("8.8.8.8:%d", echo)}
			if tt.works {
				want = append(want, fmt.Sprintf("127.0.0.1:%d", echo))
			}
			assert.Equal(t, want, dials.all(), "only the addresses looked up for each connection are dialled")
		})
	}
}

// TestDNSRebindingPlainHTTP: the same through the plain HTTP side, where
// each new connection to a destination is one lookup and one check.
func TestDNSRebindingPlainHTTP(t *testing.T) {
	srv := helloServer(t, false)
	flip := &flipResolver{answers: []string{"8.8.8.8", "127.0.0.1"}}
	p := startProxy(t, Options{Rules: mustRules(t, []string{"flip.example"}, nil, nil), Resolve: flip.resolve})
	dials := &dialLog{}
	p.dialer.Control = dials.control
	u := fmt.Sprintf("http://flip.example:%d/", port(t, srv))
	code, body, err := get(p.httpClient(nil), u)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadGateway, code, body)
	code, body, err = get(p.httpClient(nil), u)
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, fmt.Sprintf("corral: blocked flip.example:%d (resolves to 127.0.0.1, which is loopback and not in allowed IPs)", port(t, srv)), body)
	assert.Equal(t, []string{fmt.Sprintf("8.8.8.8:%d", port(t, srv))}, dials.all())
	assert.Len(t, p.refusals.all(), 1)
}

// TestMixedAnswer: of a name's addresses, only those the rules allow are
// dialled; the others are never touched.
func TestMixedAnswer(t *testing.T) {
	echo := echoServer(t)
	res := mapResolver{"mixed.example": {"10.1.2.3", "169.254.169.254", "127.0.0.1"}}
	target := net.JoinHostPort("mixed.example", fmt.Sprint(echo))

	p := startProxy(t, Options{Rules: mustRules(t, []string{"mixed.example"}, nil, []string{"127.0.0.1"}), Resolve: res.resolve})
	dials := &dialLog{}
	p.dialer.Control = dials.control
	c, err := p.socksDial(target)
	require.NoError(t, err)
	echoes(t, c)
	c.Close()
	assert.Equal(t, []string{fmt.Sprintf("127.0.0.1:%d", echo)}, dials.all())

	strict := startProxy(t, Options{Rules: mustRules(t, []string{"mixed.example"}, nil, nil), Resolve: res.resolve})
	strict.dialer.Control = dials.control
	_, status, _ := strict.connect(t, target)
	assert.Equal(t, "403 corral: blocked "+target+" (resolves to 10.1.2.3, which is private and not in allowed IPs)", status)
	assert.Len(t, dials.all(), 1, "nothing dialled")
}
