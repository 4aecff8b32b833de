package egress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corralhq/corral/internal/netrule"
	"github.com/stretchr/testify/require"
)

// The fuzz targets' rules: two names (one on any port, one wildcard on
// 443 with an exception) and one range of addresses.
var (
	fuzzAllowed = []string{"allowed.test", "*.ok.test:443"}
	fuzzDenied  = []string{"no.ok.test"}
	fuzzIPs     = []string{"192.0.2.0/24"}
	fuzzRange   = netip.MustParsePrefix("192.0.2.0/24")
	// fuzzNames is the fuzz targets' DNS: names on public addresses and
	// names that resolve where the proxy must not go.
	fuzzNames = map[string][]string{
		"allowed.test":   {"93.184.216.34"},
		"a.ok.test":      {"93.184.216.35"},
		"no.ok.test":     {"93.184.216.36"},
		"meta.ok.test":   {"169.254.169.254"},
		"lo.ok.test":     {"127.0.0.1", "93.184.216.37"},
		"mapped.ok.test": {"::ffff:10.0.0.1"},
		"nat64.ok.test":  {"64:ff9b::a00:1"},
		"ip.ok.test":     {"192.0.2.7"},
		"other.test":     {"93.184.216.38"},
	}
)

// fuzzAllowedName is the oracle: whether the rules above allow name (as
// the proxy resolves it) on port.
func fuzzAllowedName(name string, port int) bool {
	switch {
	case name == "no.ok.test":
		return false
	case name == "allowed.test":
		return true
	}
	return port == 443 && strings.HasSuffix(name, ".ok.test")
}

// dialWatch is a proxy whose dials are recorded and never made, and
// which fails the input that made one the rules refuse.
type dialWatch struct {
	*running
	mu       sync.Mutex
	resolved map[string]bool
	bad      []string
	panics   bytes.Buffer
}

var errNoDial = errors.New("fuzz: not dialled")

func newDialWatch(f *testing.F) *dialWatch {
	w := &dialWatch{resolved: map[string]bool{}}
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		w.mu.Lock()
		w.resolved[host] = true
		w.mu.Unlock()
		return mapResolver(fuzzNames).resolve(nil, host)
	}
	r, err := ParseRules(fuzzAllowed, fuzzDenied, fuzzIPs)
	require.NoError(f, err)
	// The proxy's own http.Server recovers a handler's panic and logs it:
	// the log is where one shows.
	w.running = startProxyWith(f, Options{Rules: r, Resolve: resolve, OnRefusal: func(Refusal) {}}, func(p *Proxy) {
		p.dialer.Control = w.control
		p.http.ErrorLog = log.New(&lockedWriter{w: &w.panics, mu: &w.mu}, "", 0)
	})
	return w
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (w *dialWatch) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.bad = append(w.bad, "a dial to "+address)
		return errNoDial
	}
	if !w.allowed(ap.Addr().Unmap(), int(ap.Port())) {
		w.bad = append(w.bad, fmt.Sprintf("a dial to %s (names resolved: %v)", address, w.resolved))
	}
	return errNoDial
}

// allowed is the oracle for a dial: an address in the allowed range, or
// a public address of a name the rules allow that the proxy resolved.
func (w *dialWatch) allowed(a netip.Addr, port int) bool {
	if fuzzRange.Contains(a) {
		return true
	}
	if _, blocked := netrule.BlockedAddr(a); blocked {
		return false
	}
	for name := range w.resolved {
		if !fuzzAllowedName(name, port) {
			continue
		}
		for _, s := range fuzzNames[name] {
			if netip.MustParseAddr(s).Unmap() == a {
				return true
			}
		}
	}
	return false
}

// exchange sends data on a new connection to addr, ends its write side
// and reads what comes back, then fails t for a dial the rules refuse or
// a handler's panic.
func (w *dialWatch) exchange(t *testing.T, addr string, data []byte) []byte {
	// The names resolved are kept from input to input: a forwarded
	// request's dial can outlive the exchange that asked for it.
	w.mu.Lock()
	w.bad, w.panics = nil, bytes.Buffer{}
	w.mu.Unlock()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		c.Write(data)
		c.(*net.TCPConn).CloseWrite()
	}()
	out, _ := io.ReadAll(c)
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Empty(t, w.bad, "for %q", data)
	require.NotContains(t, w.panics.String(), "panic", "for %q", data)
	return out
}

// FuzzHTTPProxy sends the HTTP proxy anything (CONNECT, absolute-form
// requests, pipelined, malformed): no panic, and no dial to an address
// the rules refuse.
func FuzzHTTPProxy(f *testing.F) {
	for _, s := range []string{
		"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
		"CONNECT a.ok.test:443 HTTP/1.1\r\nHost: a.ok.test:443\r\nUser-Agent: curl/8.5.0\r\nProxy-Connection: Keep-Alive\r\n\r\n",
		"CONNECT meta.ok.test:443 HTTP/1.1\r\nHost: meta.ok.test:443\r\n\r\n",
		"CONNECT 192.0.2.7:22 HTTP/1.1\r\nHost: 192.0.2.7:22\r\n\r\n",
		"CONNECT [::ffff:192.0.2.7]:22 HTTP/1.1\r\nHost: [::ffff:192.0.2.7]:22\r\n\r\n",
		"CONNECT 0x7f.1:443 HTTP/1.1\r\nHost: 0x7f.1:443\r\n\r\n",
		"GET http://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\nUser-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\n\r\n",
		"GET http://a.ok.test:443/ HTTP/1.1\r\nHost: lo.ok.test\r\n\r\nGET http://lo.ok.test:443/ HTTP/1.1\r\nHost: a.ok.test\r\n\r\n",
		"POST http://allowed.test:8080/p HTTP/1.1\r\nHost: allowed.test:8080\r\nContent-Length: 3\r\n\r\nabc",
		"GET http://no.ok.test:443/ HTTP/1.0\r\n\r\n",
		"GET /relative HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	w := newDialWatch(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		w.exchange(t, w.httpAddr, data)
	})
}

// FuzzSOCKS5 sends the SOCKS5 proxy anything: no panic, no dial to an
// address the rules refuse, and an answer, when there is one, of SOCKS5's
// form.
func FuzzSOCKS5(f *testing.F) {
	domain := func(name string, port int) []byte {
		b := append([]byte{5, 1, 0, 5, 1, 0, 3, byte(len(name))}, name...)
		return append(b, byte(port>>8), byte(port))
	}
	f.Add(domain("allowed.test", 443))
	f.Add(domain("a.ok.test", 443))
	f.Add(domain("lo.ok.test", 443))
	f.Add(domain("no.ok.test", 443))
	f.Add(domain("ALLOWED.TEST.", 80))
	f.Add([]byte{5, 1, 0, 5, 1, 0, 1, 192, 0, 2, 7, 0, 22})
	f.Add([]byte{5, 1, 0, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 7, 0, 22})
	f.Add([]byte{5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80})
	f.Add([]byte{5, 2, 0, 2, 5, 3, 0, 1, 0, 0, 0, 0, 0, 0})
	w := newDialWatch(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		out := w.exchange(t, w.socksAddr, data)
		if len(out) >= 2 {
			require.Equal(t, byte(5), out[0], "answered %x", out)
		}
	})
}
