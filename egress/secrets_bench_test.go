package egress

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkSecretRequest times one HTTPS request through the proxy to a
// loopback server: through a tunnel (a destination without a secret), and
// terminated (with one: the proxy's own TLS with the command, the
// placeholder replaced, the proxy's connection to the server). "new" opens
// a client connection for each request, CONNECT and handshake included;
// "reused" sends every request on one. scripts/bench-egress.sh checks the
// terminated p50 against the tunnel's.
func BenchmarkSecretRequest(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	b.Cleanup(srv.Close)
	ca, err := NewCA()
	require.NoError(b, err)
	ph, err := NewPlaceholder(testValue)
	require.NoError(b, err)
	p := startProxy(b, Options{
		Rules:   mustRules(b, []string{"example.com", "tunnel.example"}, nil, loopback),
		Resolve: mapResolver{"example.com": {"127.0.0.1"}, "tunnel.example": {"127.0.0.1"}}.resolve,
		Secrets: &SecretOptions{CA: ca, Roots: serverPool(srv),
			Secrets: []Secret{{Name: "T", Value: testValue, Placeholder: ph, Domains: []string{"example.com"}}}},
	})
	trust := x509.NewCertPool()
	trust.AddCert(srv.Certificate())
	trust.AppendCertsFromPEM(ca.CertPEM())
	for _, host := range []string{"tunnel.example", "example.com"} {
		for _, reuse := range []bool{false, true} {
			name := map[string]string{"tunnel.example": "tunnel", "example.com": "terminated"}[host] + map[bool]string{false: "/new", true: "/reused"}[reuse]
			b.Run(name, func(b *testing.B) {
				tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: p.httpAddr}), DisableKeepAlives: !reuse,
					TLSClientConfig: &tls.Config{RootCAs: trust, ServerName: "example.com"}}
				defer tr.CloseIdleConnections()
				c := &http.Client{Transport: tr}
				u := fmt.Sprintf("https://%s:%d/", host, port(b, srv))
				times := make([]time.Duration, 0, b.N)
				for b.Loop() {
					start := time.Now()
					req, _ := http.NewRequest("GET", u, nil)
					req.Header.Set("Authorization", "Bearer "+ph)
					resp, err := c.Do(req)
					require.NoError(b, err)
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					require.Equal(b, http.StatusOK, resp.StatusCode)
					times = append(times, time.Since(start))
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "p50-µs")
				b.ReportMetric(float64(times[len(times)*9/10].Nanoseconds())/1e3, "p90-µs")
			})
		}
	}
}
