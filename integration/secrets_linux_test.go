package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/testhook"
)

// The secrets' scene: servers on egressAddr with certificates of a test CA
// that the caller trusts through SSL_CERT_FILE, as a corporate or private
// CA would be, and one whose certificate no trusted CA signed.
// secret.test carries the secret; other.test is allowed without it.
var secretNames = map[string]string{
	"secret.test":  egressAddr,
	"other.test":   egressAddr,
	"badcert.test": egressAddr,
}

func secretResolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, ok := secretNames[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return egressResolve(ctx, host)
}

// secretScene is the host side of the secrets' tests.
type secretScene struct {
	*egressScene
	value          string // the secret's value, in the caller's CORRAL_TEST_TOKEN
	plain, tls     int    // recording servers' ports
	bad, git       int
	mu             sync.Mutex
	received       []string // "host auth query" of each request the servers got
	gitAuthorized  bool
	testCA, caFile string
}

func newSecretScene(t *testing.T) *secretScene {
	t.Helper()
	s := &secretScene{egressScene: newEgressScene(t)}
	restore := testhook.SetResolver(secretResolve)
	t.Cleanup(restore)
	s.value = "ghp_" + randomWord(t, 36)
	t.Setenv("CORRAL_TEST_TOKEN", s.value)
	ca, caKey, caPEM := testCA(t)
	dir := realDir(t)
	s.caFile = filepath.Join(dir, "test-ca.pem")
	require.NoError(t, os.WriteFile(s.caFile, caPEM, 0o644))
	require.NoError(t, os.Chmod(dir, 0o755))
	t.Setenv("SSL_CERT_FILE", s.caFile)
	cert := leafCert(t, ca, caKey, "secret.test", "other.test")

	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := fmt.Sprintf("%s %s auth=%q q=%s", r.Proto, r.Host, r.Header.Get("Authorization"), r.URL.RawQuery)
		s.mu.Lock()
		s.received = append(s.received, line)
		s.mu.Unlock()
		fmt.Fprintf(w, "server saw auth=%s\n", r.Header.Get("Authorization"))
	})
	plain := httptest.NewUnstartedServer(record)
	plain.Listener = listenEgress(t)
	plain.Start()
	t.Cleanup(plain.Close)
	s.plain = portOf(plain.Listener)
	s.tls = s.serveTLS(record, cert, true)
	s.bad = s.serveTLS(record, nil, false)
	s.git = s.serveGit(cert)
	return s
}

// serveTLS serves h with cert (nil: httptest's own, which no trusted CA
// signed), offering HTTP/2 when h2.
func (s *secretScene) serveTLS(h http.Handler, cert *tls.Certificate, h2 bool) int {
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = listenEgress(s.t)
	srv.EnableHTTP2 = h2
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	if cert != nil {
		srv.TLS.Certificates = []tls.Certificate{*cert}
	}
	s.t.Cleanup(srv.Close)
	return portOf(srv.Listener)
}

// serveGit serves git's smart HTTP (startGit's) over TLS, asking for
// Basic authorization whose password is the secret's value.
func (s *secretScene) serveGit(cert *tls.Certificate) int {
	backend := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: net.JoinHostPort(egressAddr, strconv.Itoa(s.startGit()))})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pw, ok := r.BasicAuth()
		if !ok || pw != s.value {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		s.mu.Lock()
		s.gitAuthorized = true
		s.mu.Unlock()
		backend.ServeHTTP(w, r)
	})
	return s.serveTLS(h, cert, false)
}

func (s *secretScene) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.received...)
}

// config is the scene's sandbox with CORRAL_TEST_TOKEN bound to secret.test.
func (s *secretScene) config() corral.Config {
	cfg := s.egressScene.config([]string{"secret.test", "other.test", "badcert.test"}, nil)
	cfg.Secrets = []corral.Secret{{Name: "CORRAL_TEST_TOKEN", Domains: []string{"secret.test"}}}
	return cfg
}

func randomWord(t *testing.T, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

func testCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "corral test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func leafCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, names ...string) *tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestSecretCommandHoldsOnlyThePlaceholder(t *testing.T) {
	s := newSecretScene(t)
	sb, _ := s.sandbox(s.config())
	info := sb.Secrets()
	require.Len(t, info, 1)
	ph := info[0].Placeholder
	require.True(t, strings.HasPrefix(ph, "ghp_"), "the known prefix is kept: %s", ph)
	require.Len(t, ph, len(s.value))

	r := s.run(sb, `printf '%s\n' "$CORRAL_TEST_TOKEN"`)
	require.Equal(t, 0, r.code, r.String())
	assert.Equal(t, ph+"\n", r.stdout)

	// Every environment the command can read, its own and its init's
	// among them, dumped where the host reads it: the placeholder is there
	// (the probe reads them), the value nowhere. The same probe without
	// the sandbox finds the value.
	dump := `for f in /proc/[0-9]*/environ; do cat "$f" 2>/dev/null; echo; done > "$1"`
	inside := filepath.Join(s.ws, "environs")
	r = s.run(sb, fmt.Sprintf(`sh -c '%s' - %s`, dump, inside))
	require.Equal(t, 0, r.code, r.String())
	b, err := os.ReadFile(inside)
	require.NoError(t, err)
	assert.Contains(t, string(b), "CORRAL_TEST_TOKEN="+ph, "the probe finds the placeholder")
	assert.NotContains(t, string(b), s.value, "the value is in no environment inside")
	outside := filepath.Join(s.ws, "environs.host")
	h := s.host(fmt.Sprintf(`sh -c '%s' - %s`, dump, outside), "CORRAL_TEST_TOKEN="+s.value)
	require.Equal(t, 0, h.code, h.String())
	b, err = os.ReadFile(outside)
	require.NoError(t, err)
	assert.Contains(t, string(b), s.value, "without the sandbox the probe finds the value")

	// Nor in the bundle or anything else the command reads.
	r = s.run(sb, `cat "$SSL_CERT_FILE" | grep -c "BEGIN CERTIFICATE"; echo x >> "$SSL_CERT_FILE" && echo wrote`)
	assert.NotContains(t, r.stdout, "wrote", "the bundle is read-only: %s", r.String())
	assert.NotContains(t, r.stdout+r.stderr, s.value)
}

func TestSecretCurlHTTPAndHTTPS(t *testing.T) {
	requireTool(t, "curl")
	s := newSecretScene(t)
	sb, logs := s.sandbox(s.config())
	ph := sb.Secrets()[0].Placeholder
	get := func(url string, args ...string) result {
		// No -k: curl verifies the sandbox's CA through the bundle.
		r := s.run(sb, fmt.Sprintf(`curl -sS --max-time 20 -H "Authorization: Bearer $CORRAL_TEST_TOKEN" %s -w '\nstatus %%{http_code} version %%{http_version}\n' '%s'`, strings.Join(args, " "), url))
		assert.NotContains(t, r.stdout+r.stderr, s.value, "the value never comes back inside")
		return r
	}
	for _, c := range []struct{ name, url, version string }{
		{"http", fmt.Sprintf("http://secret.test:%d/?token=$CORRAL_TEST_TOKEN", s.plain), "1.1"},
		{"https", fmt.Sprintf("https://secret.test:%d/", s.tls), "2"},
		{"https http1.1", fmt.Sprintf("https://secret.test:%d/", s.tls), "1.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{}
			if c.name == "https http1.1" {
				args = append(args, "--http1.1")
			}
			url := strings.ReplaceAll(c.url, "$CORRAL_TEST_TOKEN", ph)
			r := get(url, args...)
			require.Contains(t, r.stdout, "status 200 version "+c.version, r.String())
			assert.Contains(t, r.stdout, "server saw auth=Bearer "+ph, "an echoed value comes back as the placeholder")
			seen := s.seen()
			last := seen[len(seen)-1]
			assert.Contains(t, last, `auth="Bearer `+s.value+`"`, "the server got the value")
			if c.name == "http" {
				assert.Contains(t, last, "q=token="+s.value)
			}
		})
	}
	t.Run("another allowed domain gets the placeholder", func(t *testing.T) {
		for _, url := range []string{fmt.Sprintf("http://other.test:%d/", s.plain), fmt.Sprintf("https://other.test:%d/", s.tls)} {
			r := get(url)
			require.Contains(t, r.stdout, "status 200", r.String())
			seen := s.seen()
			assert.Contains(t, seen[len(seen)-1], `auth="Bearer `+ph+`"`)
		}
		// Plain HTTP is read by the proxy: the placeholder going elsewhere
		// is reported. (Through a tunnel it is not seen.)
		assert.Contains(t, strings.Join(logs.all(), "\n"), fmt.Sprintf("corral: sent to other.test:%d (the placeholder of secret CORRAL_TEST_TOKEN, as it is: the value is added only for secret.test)", s.plain), "%q", logs.all())
		assert.NotContains(t, strings.Join(logs.all(), "\n"), s.value)
	})
	t.Run("a server whose certificate does not verify is refused", func(t *testing.T) {
		n := len(s.seen())
		cfg := s.config()
		cfg.Secrets[0].Domains = append(cfg.Secrets[0].Domains, "badcert.test")
		sb2, _ := s.sandbox(cfg)
		r := s.run(sb2, fmt.Sprintf(`curl -sS --max-time 20 -H "Authorization: Bearer $CORRAL_TEST_TOKEN" -w '\nstatus %%{http_code}\n' https://badcert.test:%d/`, s.bad))
		assert.Contains(t, r.stdout, "status 502", r.String())
		assert.Contains(t, r.stdout, "certificate does not verify against the caller's trust store")
		assert.NotContains(t, r.stdout+r.stderr, s.value)
		assert.Len(t, s.seen(), n, "nothing reached the server")
	})
}

func TestSecretClients(t *testing.T) {
	s := newSecretScene(t)
	sb, _ := s.sandbox(s.config())
	ph := sb.Secrets()[0].Placeholder
	url := fmt.Sprintf("https://secret.test:%d/py", s.tls)
	check := func(t *testing.T, r result) {
		t.Helper()
		require.Equal(t, 0, r.code, r.String())
		assert.Contains(t, r.stdout, "server saw auth=Bearer "+ph)
		seen := s.seen()
		assert.Contains(t, seen[len(seen)-1], `auth="Bearer `+s.value+`"`)
		assert.NotContains(t, r.stdout+r.stderr, s.value)
	}
	t.Run("python urllib", func(t *testing.T) {
		requireTool(t, "python3")
		check(t, s.run(sb, `python3 -c '
import os, urllib.request
req = urllib.request.Request(os.sys.argv[1], headers={"Authorization": "Bearer " + os.environ["CORRAL_TEST_TOKEN"]})
print(urllib.request.urlopen(req, timeout=20).read().decode())
' `+url))
	})
	t.Run("python requests", func(t *testing.T) {
		requireTool(t, "python3")
		if r := s.run(sb, `python3 -c 'import requests'`); r.code != 0 {
			t.Skip("the python3 the sandbox finds has no requests: " + r.stderr)
		}
		check(t, s.run(sb, `python3 -c '
import os, sys, requests
r = requests.get(sys.argv[1], headers={"Authorization": "Bearer " + os.environ["CORRAL_TEST_TOKEN"]}, timeout=20)
print(r.text)
' `+url))
	})
	t.Run("node", func(t *testing.T) {
		requireTool(t, "node")
		// Node's fetch reads no proxy variable before Node 24 (22.21 with
		// NODE_USE_ENV_PROXY=1); its https module, given the tunnel, trusts
		// the sandbox's CA through NODE_EXTRA_CA_CERTS.
		check(t, s.run(sb, `NODE_USE_ENV_PROXY=1 node -e '
const http = require("http"), https = require("https"), tls = require("tls");
const target = new URL(process.argv[1]), proxy = new URL(process.env.HTTPS_PROXY);
const major = Number(process.versions.node.split(".")[0]);
const headers = {Authorization: "Bearer " + process.env.CORRAL_TEST_TOKEN};
if (major >= 24) {
  fetch(target, {headers}).then(r => r.text()).then(t => console.log(t), e => { console.error(e); process.exit(1) });
} else {
  http.request({host: proxy.hostname, port: proxy.port, method: "CONNECT", path: target.host}).on("connect", (res, socket) => {
    https.get({host: target.hostname, port: target.port, path: target.pathname, headers,
      createConnection: () => tls.connect({socket, servername: target.hostname})}, r => {
      let b = ""; r.on("data", d => b += d); r.on("end", () => console.log(b));
    }).on("error", e => { console.error(e); process.exit(1) });
  }).on("error", e => { console.error(e); process.exit(1) }).end();
}
' `+url))
	})
	t.Run("git clone over https", func(t *testing.T) {
		requireTool(t, "git")
		r := s.run(sb, fmt.Sprintf(`cd "$(mktemp -d)" && HOME=$PWD git clone -q "https://x-access-token:$CORRAL_TEST_TOKEN@secret.test:%d/repo.git" c 2>&1 && git -C c log --format=%%s`, s.git))
		require.Equal(t, 0, r.code, r.String())
		assert.Contains(t, r.stdout, "the commit through the proxy")
		assert.NotContains(t, r.stdout+r.stderr, s.value)
		s.mu.Lock()
		defer s.mu.Unlock()
		assert.True(t, s.gitAuthorized, "the server got the value as Basic authorization's password")
	})
}

// On the landlock rung the proxy is the sandbox's one on the host's
// loopback, and the bundle lies at its host path, read-only to the
// command by Landlock: the same secret, the same outcome.
func TestSecretLandlockRung(t *testing.T) {
	requireTool(t, "curl")
	s := newSecretScene(t)
	sb, _ := rungSandbox(t, corral.RungLandlock, s.config())
	ph := sb.Secrets()[0].Placeholder
	r := s.run(sb, fmt.Sprintf(`printf '%%s\n' "$CORRAL_TEST_TOKEN"; curl -sS --max-time 20 -H "Authorization: Bearer $CORRAL_TEST_TOKEN" https://secret.test:%d/; echo x >> "$SSL_CERT_FILE" || echo bundle read-only`, s.tls))
	assert.Equal(t, ph+"\nserver saw auth=Bearer "+ph+"\nbundle read-only\n", r.stdout, r.String())
	seen := s.seen()
	require.NotEmpty(t, seen)
	assert.Contains(t, seen[len(seen)-1], `auth="Bearer `+s.value+`"`)
	assert.NotContains(t, r.stdout+r.stderr, s.value)
}
