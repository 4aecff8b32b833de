package corral

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/corralhq/corral/egress"
	"github.com/corralhq/corral/internal/environ"
	"github.com/corralhq/corral/internal/ladder"
	"github.com/corralhq/corral/internal/testhook"
)

// egressPolicy is a NetworkAllow sandbox's side of its proxies: the lists
// as configured, the rules in force, and the proxies serving commands, so
// that new rules reach every one of them.
type egressPolicy struct {
	mu       sync.Mutex
	allowed  []string
	denied   []string
	ips      []string
	rules    *egress.Rules
	upstream *url.URL
	// noUpstream is the caller's NO_PROXY, for the upstream.
	noUpstream string
	proxies    map[*egress.Proxy]struct{}
	// maxConns caps each proxy's client connections (egress.Options).
	maxConns int
	// logf is Config.Logf: where a destination the proxy could not reach
	// is told, since an HTTPS client shows nothing of the proxy's answer.
	logf func(format string, args ...any)
	// secrets are the sandbox's secrets (secrets.go), or nil.
	secrets *secretPolicy
	// connected, in a learning run that reaches destinations, receives
	// each connection made (see LearnCommand).
	connected func(egress.Connected)
}

// egressLists are the Config fields of the policy, in the order ParseRules
// takes them.
func egressLists(allowed, denied, ips []string) []struct {
	field   string
	entries []string
} {
	return []struct {
		field   string
		entries []string
	}{{"AllowedDomains", allowed}, {"DeniedDomains", denied}, {"AllowedIPs", ips}}
}

// DefaultProxyConnections is Config.ProxyConnections when 0: far above
// what package managers, git and browsers open at once (tens), low enough
// that a command opening connections in a loop cannot take all of the
// caller's descriptors.
const DefaultProxyConnections = egress.DefaultMaxConns

// ParseProxyConnections reads a cap on the connections open through the
// proxy at once (Config.ProxyConnections) as the CLI's --proxy-connections
// and a config file's proxy_connections give it: a number above zero, or
// "none" for NoLimit.
func ParseProxyConnections(v string) (int, error) {
	if v == "none" {
		return NoLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, errors.New("want a number above zero, or none")
	}
	return n, nil
}

// resolveEgress parses the network lists and the connection cap; they
// need NetworkAllow, so that a list never looks like a restriction that
// is not in force.
func (s *spec) resolveEgress(c Config) error {
	if s.Network != NetworkAllow {
		for _, l := range egressLists(c.AllowedDomains, c.DeniedDomains, c.AllowedIPs) {
			if len(l.entries) > 0 {
				return &ConfigError{Field: l.field, Value: l.entries[0], Reason: fmt.Sprintf(`needs Network %q`, NetworkAllow)}
			}
		}
		if c.ProxyConnections != 0 {
			return &ConfigError{Field: "ProxyConnections", Value: strconv.Itoa(c.ProxyConnections), Reason: fmt.Sprintf(`needs Network %q`, NetworkAllow)}
		}
		return nil
	}
	maxConns, err := proxyConnections(c.ProxyConnections)
	if err != nil {
		return err
	}
	rules, err := parseEgress(c.AllowedDomains, c.DeniedDomains, c.AllowedIPs)
	if err != nil {
		return err
	}
	s.Egress = &egressPolicy{
		allowed: slices.Clone(c.AllowedDomains), denied: slices.Clone(c.DeniedDomains), ips: slices.Clone(c.AllowedIPs),
		rules: rules, proxies: map[*egress.Proxy]struct{}{}, maxConns: maxConns, logf: c.Logf,
	}
	if c.learn != nil && c.learn.connected != nil {
		s.Egress.rules, s.Egress.connected = rules.Learning(), c.learn.connected
	}
	return nil
}

// proxyConnections is Config.ProxyConnections as egress.Options.MaxConns
// takes it: 0 the default, negative none.
func proxyConnections(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultProxyConnections, nil
	case n == NoLimit:
		return -1, nil
	case n < 0:
		return 0, &ConfigError{Field: "ProxyConnections", Value: strconv.Itoa(n), Reason: "want more than zero, or corral.NoLimit"}
	}
	return n, nil
}

// parseEgress parses the lists; an error names the field and the entry.
func parseEgress(allowed, denied, ips []string) (*egress.Rules, error) {
	for i, l := range egressLists(allowed, denied, ips) {
		for _, e := range l.entries {
			one := [3][]string{}
			one[i] = []string{e}
			if _, err := egress.ParseRules(one[0], one[1], one[2]); err != nil {
				return nil, &ConfigError{Field: l.field, Value: e, Reason: egressReason(err, e), Err: err}
			}
		}
	}
	rules, err := egress.ParseRules(allowed, denied, ips)
	if err != nil {
		return nil, &ConfigError{Field: "AllowedDomains", Reason: err.Error(), Err: err}
	}
	return rules, nil
}

// useCallerProxy makes the sandbox's proxies go through the caller's own
// (HTTPS_PROXY, else HTTP_PROXY, and NO_PROXY, of the caller's
// environment): the command's variables name the sandbox's proxy instead.
func (e *egressPolicy) useCallerProxy() error {
	var o egress.Options
	if err := o.FromEnvironment(nil); err != nil {
		return &SetupError{Layer: LayerEgress, Err: fmt.Errorf("the caller's upstream proxy: %w", err)}
	}
	e.upstream, e.noUpstream = o.Upstream, o.NoUpstream
	return nil
}

// SetNetworkRules replaces the lists of a NetworkAllow sandbox (see
// Config.AllowedDomains, DeniedDomains and AllowedIPs). Connections made
// from then on, by running commands too, follow the new lists;
// connections already open stay. A sandbox of another Network refuses.
func (sb *Sandbox) SetNetworkRules(allowed, denied, allowedIPs []string) error {
	e := sb.spec.Egress
	if e == nil {
		return &ConfigError{Field: "AllowedDomains", Reason: fmt.Sprintf("needs Network %q", NetworkAllow)}
	}
	rules, err := parseEgress(allowed, denied, allowedIPs)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.allowed, e.denied, e.ips, e.rules = slices.Clone(allowed), slices.Clone(denied), slices.Clone(allowedIPs), rules
	for p := range e.proxies {
		p.SetRules(rules)
	}
	return nil
}

// lists returns the lists in force.
func (e *egressPolicy) lists() (allowed, denied, ips []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.allowed), slices.Clone(e.denied), slices.Clone(e.ips)
}

// proxy starts a proxy with the rules in force, reporting refusals to
// refused; with a credential, it serves only the clients that give it.
// stop closes it, which ends every connection it carries.
func (e *egressPolicy) proxy(refused func(Violation), credential string) (p *egress.Proxy, stop func(), err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, err = egress.New(egress.Options{
		Rules:      e.rules,
		Resolve:    testhook.Resolver(),
		Upstream:   e.upstream,
		NoUpstream: e.noUpstream,
		MaxConns:   e.maxConns,
		Credential: credential,
		OnRefusal: func(r egress.Refusal) {
			refused(Violation{Kind: ViolationNetwork, Target: net.JoinHostPort(r.Host, strconv.Itoa(r.Port)), Rule: r.Reason, Count: 1})
		},
		OnUnreachable: e.unreachable(),
		Secrets:       e.secrets.options(refused),
		OnConnect:     e.connected,
	})
	if err != nil {
		return nil, nil, err
	}
	e.proxies[p] = struct{}{}
	return p, func() {
		e.mu.Lock()
		delete(e.proxies, p)
		e.mu.Unlock()
		p.Close()
	}, nil
}

// unreachable is what the proxy tells of a destination it could not reach:
// a line through Config.Logf, none without one.
func (e *egressPolicy) unreachable() func(host string, port int, err error) {
	if e.logf == nil {
		return nil
	}
	return func(host string, port int, err error) {
		e.logf("corral: cannot reach %s through the sandbox's proxy: %v", net.JoinHostPort(host, strconv.Itoa(port)), err)
	}
}

// serveOn serves the HTTP proxy on l[0] and SOCKS5 on l[1]; both end when
// the proxy is closed.
func serveOn(p *egress.Proxy, l [2]net.Listener) {
	go p.ServeHTTPProxy(l[0])
	go p.ServeSOCKS5(l[1])
}

// hostProxy is a proxy listening on the host's loopback, for rungs without
// a network namespace of their own (landlock, seatbelt): one per Sandbox,
// shared by its commands, which reach it through the ports their
// Landlock rules or profile allow. Every process of the host can connect
// to it too: it serves only the clients that give its credential, which
// the commands' proxy variables carry.
type hostProxy struct {
	ports      [2]int // HTTP, SOCKS5
	credential string
	stop       func()
}

// env points env's proxy variables at the proxy, with its credential.
func (h *hostProxy) env(env []string) []string {
	return withProxyEnv(env, h.ports[0], h.ports[1], h.credential)
}

// addrs are the proxy's two addresses.
func (h *hostProxy) addrs() []netip.AddrPort {
	lo := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	return []netip.AddrPort{netip.AddrPortFrom(lo, uint16(h.ports[0])), netip.AddrPortFrom(lo, uint16(h.ports[1]))}
}

func newHostProxy(e *egressPolicy, refused func(Violation)) (*hostProxy, error) {
	var ls [2]net.Listener
	for i := range ls {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			closeListeners(ls[:i])
			return nil, &SetupError{Layer: LayerEgress, Err: err}
		}
		ls[i] = l
	}
	credential, err := egress.NewCredential()
	if err != nil {
		closeListeners(ls[:])
		return nil, &SetupError{Layer: LayerEgress, Err: err}
	}
	p, stop, err := e.proxy(refused, credential)
	if err != nil {
		closeListeners(ls[:])
		return nil, &SetupError{Layer: LayerEgress, Err: err}
	}
	serveOn(p, ls)
	h := &hostProxy{credential: credential, stop: func() { stop(); closeListeners(ls[:]) }}
	for i, l := range ls {
		h.ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return h, nil
}

func closeListeners(ls []net.Listener) {
	for _, l := range ls {
		if l != nil {
			l.Close()
		}
	}
}

// proxyVars are the variables through which programs find a proxy; the
// command's name the sandbox's, whatever the caller's said.
var proxyVars = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY",
	"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy",
}

// withProxyEnv points env's proxy variables at the sandbox's proxy on
// 127.0.0.1: HTTP (CONNECT for HTTPS) on httpPort and SOCKS5, with names
// resolved by the proxy (socks5h), on socksPort, each with credential as
// the password of user CredentialUser when it is not "". Loopback stays
// direct.
func withProxyEnv(env []string, httpPort, socksPort int, credential string) []string {
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(proxyVars, name) {
			out = append(out, kv)
		}
	}
	user := ""
	if credential != "" {
		user = egress.CredentialUser + ":" + credential + "@"
	}
	http := "http://" + user + "127.0.0.1:" + strconv.Itoa(httpPort)
	socks := "socks5h://" + user + "127.0.0.1:" + strconv.Itoa(socksPort)
	for _, kv := range [][2]string{
		{"HTTP_PROXY", http}, {"HTTPS_PROXY", http}, {"ALL_PROXY", socks}, {"NO_PROXY", "localhost,127.0.0.1,::1"},
	} {
		out = environ.Set(out, kv[0]+"="+kv[1])
		out = environ.Set(out, strings.ToLower(kv[0])+"="+kv[1])
	}
	return out
}

// networkEnforcement says, for Doctor, how network is enforced on plan's
// rung.
func networkEnforcement(network Network, plan *ladder.Plan) string {
	if network == NetworkHost {
		return "host: the host's network"
	}
	what := string(network) + ": "
	switch {
	case plan.Rung == RungNone:
		return what + "not enforced: commands run unsandboxed, with the host's network"
	case plan.Rung == RungSeatbelt && network == NetworkNone:
		return what + "the Seatbelt profile allows no IP at all, loopback included"
	case plan.Rung == RungSeatbelt:
		return what + "the Seatbelt profile allows IP only to the ports of corral's proxy on localhost, which reaches only the allowed names " +
			"and serves only clients with the sandbox's credential"
	case plan.Rung == RungFull && network == NetworkNone:
		return what + "a network namespace with only loopback"
	case plan.Rung == RungFull:
		return what + "a network namespace with only loopback, where corral's HTTP and SOCKS5 proxy (served by the caller) reaches only the allowed names"
	}
	// The landlock rung: the host's network, fenced by Landlock and seccomp.
	var parts []string
	switch {
	case network == NetworkNone:
		parts = append(parts, "Landlock refuses TCP bind and connect")
	case plan.Seccomp:
		parts = append(parts, "corral's proxy listens on the host's loopback, serving only clients with the sandbox's credential; "+
			"the sandbox's init makes each TCP connection "+
			"of the command, to the proxy's address only (connect stops in a seccomp listener), "+
			"Landlock refuses every TCP connect and bind of the command's own, and seccomp refuses TCP Fast Open "+
			"and a listen on every address")
	default:
		parts = append(parts, "corral's proxy listens on the host's loopback, serving only clients with the sandbox's credential; "+
			"Landlock allows TCP connect only to its two ports "+
			"(to any address on those ports: Landlock's rules name ports, not addresses) and no bind")
	}
	if !plan.Seccomp {
		parts = append(parts, "without seccomp, UDP and raw sockets are NOT refused")
	} else if network == NetworkNone {
		parts = append(parts, "seccomp refuses IPv4 and IPv6 sockets")
	} else {
		parts = append(parts, "seccomp refuses every IPv4 and IPv6 socket but TCP (UDP, raw, SCTP, MPTCP)")
	}
	return what + strings.Join(parts, "; ")
}

// egressReason is the part of a network list entry's parse error that says
// what is wrong with it, without the entry, which the caller names.
func egressReason(err error, entry string) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, strconv.Quote(entry)+": "); ok {
		return after
	}
	return strings.TrimPrefix(msg, "egress: ")
}
