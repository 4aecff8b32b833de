package tools

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDialControl(t *testing.T) {
	tests := []struct {
		network, address string
		refused          string // "" means allowed
	}{
		{"tcp", "93.184.215.14:443", ""},
		{"tcp6", "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:80", ""},
		{"udp", "8.8.8.8:53", ""},
		{"tcp", "127.0.0.1:80", "loopback"},
		{"tcp4", "10.0.0.1:443", "private"},
		{"tcp", "169.254.169.254:80", "cloud metadata"},
		{"tcp6", "[fd00:ec2::254]:80", "cloud metadata"},
		{"tcp6", "[::ffff:127.0.0.1]:80", "loopback"},
		{"tcp6", "[fe80::1%eth0]:80", "link-local"},
		{"tcp", "100.100.100.200:80", "cloud metadata"},
		{"unix", "/run/docker.sock", "not tcp or udp"},
		{"tcp", "example.com:80", "not an IP address"},
		{"tcp", "1.2.3.4", "not host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.network+" "+tt.address, func(t *testing.T) {
			err := DialControl(tt.network, tt.address, nil)
			if tt.refused == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrBlockedURL)
			assert.Contains(t, err.Error(), tt.refused)
		})
	}
}

func TestTransportRefusesLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "internal") }))
	defer srv.Close()

	// Without the check the server is reachable, so the refusal below is
	// the transport's doing.
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()

	_, err = (&http.Client{Transport: NewTransport()}).Get(srv.URL)
	require.ErrorIs(t, err, ErrBlockedURL)
	var de *DialError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, err.Error(), "loopback")
}

func TestTransportRefusesRedirectToInternal(t *testing.T) {
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "internal") }))
	defer internal.Close()
	// The first hop is allowed by a dialer that pretends it is public; the
	// redirect it returns goes to the loopback server.
	public := httptest.NewServer(http.RedirectHandler(internal.URL, http.StatusFound))
	defer public.Close()
	publicHost := mustHost(t, public.URL)

	tr := NewTransport()
	safe := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == publicHost {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
		return safe(ctx, network, addr)
	}
	_, err := (&http.Client{Transport: tr}).Get(public.URL)
	require.ErrorIs(t, err, ErrBlockedURL)
	assert.Contains(t, err.Error(), "loopback")
}

// TestDialControlClosesRebinding plays DNS rebinding: the checker's lookup
// says the host is public, the lookup made for the fetch says loopback.
func TestDialControlClosesRebinding(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "internal") }))
	defer srv.Close()
	_, port, err := net.SplitHostPort(mustHost(t, srv.URL))
	require.NoError(t, err)
	target := "http://rebind.test:" + port + "/"

	c := &URLChecker{Resolver: fakeResolver{t: t, hosts: map[string][]string{"rebind.test": {"93.184.215.14"}}}}
	_, err = c.Check(context.Background(), target)
	require.NoError(t, err, "the check alone is fooled")

	// secondAnswer stands in for the resolver answering differently at
	// fetch time.
	secondAnswer := func(d *net.Dialer) func(context.Context, string, string) (net.Conn, error) {
		return func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		}
	}
	plain := &http.Transport{DialContext: secondAnswer(&net.Dialer{})}
	resp, err := (&http.Client{Transport: plain}).Get(target)
	require.NoError(t, err, "without DialControl the rebound fetch reaches loopback")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "internal", string(body))

	guarded := &http.Transport{DialContext: secondAnswer(&net.Dialer{Control: DialControl})}
	_, err = (&http.Client{Transport: guarded}).Get(target)
	require.ErrorIs(t, err, ErrBlockedURL)
}

func TestNewTransportIgnoresProxy(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://10.0.0.1:3128")
	t.Setenv("HTTPS_PROXY", "http://10.0.0.1:3128")
	assert.Nil(t, NewTransport().Proxy)
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}
