package egress

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"os"
	"sync"
	"time"
)

// CA is the certificate authority a proxy that carries secrets signs the
// certificates it presents with. It lives in memory only: its key is
// never written anywhere, so a command that trusts it cannot sign with it.
type CA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	leafKey *ecdsa.PrivateKey // one key for every name: making one is the cost
	pem     []byte

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// caValidity bounds the CA; leafValidity each certificate it signs, made
// again when it is near its end.
const (
	caValidity   = 397 * 24 * time.Hour
	leafValidity = 7 * 24 * time.Hour
)

// NewCA makes a CA with a fresh ECDSA P-256 key.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "corral sandbox CA " + now.UTC().Format(time.RFC3339), Organization: []string{"corral"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, leafKey: leafKey, leaves: map[string]*tls.Certificate{},
		pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// CertPEM is the CA's certificate, PEM-encoded: what the command trusts.
func (c *CA) CertPEM() []byte { return bytes.Clone(c.pem) }

// leaf returns the certificate the proxy presents for host (a name or an
// address), signed by c, from the cache while it has a day left.
func (c *CA) leaf(host string) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.leaves[host]; ok && time.Until(l.Leaf.NotAfter) > 24*time.Hour {
		return l, nil
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if a, err := netip.ParseAddr(host); err == nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &c.leafKey.PublicKey, c.key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	l := &tls.Certificate{Certificate: [][]byte{der, c.cert.Raw}, PrivateKey: c.leafKey, Leaf: leaf}
	if len(c.leaves) >= maxLeaves {
		clear(c.leaves)
	}
	c.leaves[host] = l
	return l, nil
}

// maxLeaves bounds the certificates kept; the names are the secrets'
// domains, wildcards allowing any number under them.
const maxLeaves = 1024

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n.Add(n, big.NewInt(1))
}

// certFiles are where the host keeps its roots as one PEM file, as Go's
// crypto/x509 looks for them on Linux and the BSDs; /etc/ssl/cert.pem is
// also macOS's.
var certFiles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
	"/usr/local/etc/ssl/cert.pem",
}

// CallerRoots returns the caller's trust store as PEM: the file
// SSL_CERT_FILE names (getenv is os.Getenv when nil), else the host's
// bundle. The proxy verifies real servers against it, and the command's
// bundle is it plus the CA.
func CallerRoots(getenv func(string) string) ([]byte, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if f := getenv("SSL_CERT_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("egress: SSL_CERT_FILE: %w", err)
		}
		return b, nil
	}
	for _, f := range certFiles {
		if b, err := os.ReadFile(f); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("egress: no trust store found (set SSL_CERT_FILE to a PEM file of root certificates)")
}

// RootPool parses PEM roots into a pool for SecretOptions.Roots.
func RootPool(roots []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(roots) {
		return nil, errors.New("egress: the trust store holds no certificate")
	}
	return pool, nil
}

// Bundle is roots followed by the CA's certificate: the file the command's
// tools are pointed at (SSL_CERT_FILE and the others).
func (c *CA) Bundle(roots []byte) []byte {
	out := bytes.Clone(roots)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, c.pem...)
}
