package egress

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// CredentialUser is the user name of the proxy URL NewCredential's
// credential is given in ("http://corral:TOKEN@127.0.0.1:PORT"). The
// proxy checks only the password: the user name may be anything.
const CredentialUser = "corral"

// NewCredential returns a random credential for Options.Credential: 128
// bits, in hex, so that it needs no escaping in a URL.
func NewCredential() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// goodCredential reports, in constant time, whether pw is the proxy's
// credential; with none set, every client is.
func (p *Proxy) goodCredential(pw string) bool {
	if p.credential == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(pw), []byte(p.credential)) == 1
}

// proxyAuthorized reports whether an HTTP request carries the proxy's
// credential as Basic proxy authorization.
func (p *Proxy) proxyAuthorized(h http.Header) bool {
	if p.credential == "" {
		return true
	}
	scheme, rest, ok := strings.Cut(strings.TrimSpace(h.Get("Proxy-Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return false
	}
	_, pw, ok := strings.Cut(string(b), ":")
	return ok && p.goodCredential(pw)
}

// credentialLine is the answer to a client without the credential.
const credentialLine = "corral: this proxy serves only its own sandbox's commands, which are given its credential in their proxy variables"

// askCredential answers a request without the proxy's credential 407,
// and closes the connection: the client is not the sandbox's, and what
// it asked for is neither done nor reported.
func askCredential(w http.ResponseWriter) {
	w.Header().Set("Proxy-Authenticate", `Basic realm="corral"`)
	w.Header().Set("Connection", "close")
	http.Error(w, credentialLine, http.StatusProxyAuthRequired)
}

// write407 is askCredential on a connection the HTTP server does not
// hold.
func write407(c net.Conn) {
	fmt.Fprintf(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"corral\"\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		len(credentialLine)+1, credentialLine)
}

// errNoCredential is a SOCKS5 client that did not give the credential.
var errNoCredential = errors.New("no credential")

// socksUserPass reads a SOCKS5 username/password subnegotiation (RFC
// 1929) and answers it: success when the password is the proxy's
// credential.
func (p *Proxy) socksUserPass(c net.Conn) error {
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}
	if hdr[0] != 1 {
		return errors.New("not a username/password subnegotiation")
	}
	if _, err := io.ReadFull(c, make([]byte, hdr[1])); err != nil {
		return err
	}
	var n [1]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return err
	}
	pw := make([]byte, n[0])
	if _, err := io.ReadFull(c, pw); err != nil {
		return err
	}
	if !p.goodCredential(string(pw)) {
		c.Write([]byte{1, 1})
		return errNoCredential
	}
	_, err := c.Write([]byte{1, 0})
	return err
}
