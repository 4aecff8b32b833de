// Package egress is the allowlist proxy behind corral's NetworkAllow mode:
// an HTTP proxy (CONNECT and plain HTTP) and a SOCKS5 proxy that let a
// sandboxed command reach the names its Rules allow and nothing else.
//
// The proxy runs in the process that owns the sandbox. It serves listeners
// that were created inside the sandbox's network namespace and handed out
// (a socket keeps its namespace wherever it is used), and dials out from the
// caller's own namespace, so nothing else is started and no port is opened
// on the host.
//
//	rules, err := egress.ParseRules(
//		[]string{"github.com", "*.githubusercontent.com", "registry.npmjs.org:443"},
//		[]string{"gist.githubusercontent.com"},
//		nil)
//	if err != nil {
//		return err // names the malformed entry
//	}
//	o := egress.Options{Rules: rules, OnRefusal: func(r egress.Refusal) { log.Print(r) }}
//	if err := o.FromEnvironment(nil); err != nil { // HTTPS_PROXY, NO_PROXY
//		return err
//	}
//	p, err := egress.New(o)
//	...
//	go p.ServeHTTPProxy(httpListener)
//	go p.ServeSOCKS5(socksListener)
//	defer p.Close()
//
// # Rules
//
// A domain entry is an exact name ("github.com") or a wildcard
// ("*.github.com"), with an optional port ("github.com:443"); without a
// port it matches every port. A wildcard matches every name under its
// domain at any depth ("api.github.com", "a.b.github.com") and never the
// domain itself: allow "github.com" and "*.github.com" for both. Names
// are compared after IDNA mapping (UTS #46, as a resolver lookup maps
// them) to lower-case ASCII, without a trailing dot, so "Bücher.example",
// "BÜCHER.example." and "xn--bcher-kva.example" are one name. A denied
// entry wins over any allowed one; no allowed entry allows nothing, and
// nil or zero Rules allow nothing. [ParseRules] refuses a malformed entry
// (a bad name or port, a "*" other than a whole first label, an IP
// address given as a domain) with an error that names it.
//
// Allowed IPs are CIDR ranges or single addresses. They do two things: an
// IP literal the client asks for ("10.1.2.3:5432", "[fd00::5]:443") is
// allowed only inside one of them, whatever the domain entries say, and
// they lift the address check below for the addresses they cover.
//
// # Addresses
//
// The proxy resolves an allowed name itself, once per connection, and
// dials only the addresses it resolved, never an address the client
// supplied. Each address is checked before it is dialled: one that is not
// on the public internet is skipped unless an allowed range covers it, and
// when no address is left the connection is refused. Not on the public
// internet means (package internal/netrule, which corral's tools package
// applies to browsing too): a range of IANA's IPv4 and IPv6
// special-purpose registries (loopback, private, link-local, CGNAT,
// unique-local, documentation, benchmarking, Teredo, ...), multicast, an
// address of one of the host's own interfaces as they are at that moment,
// and IPv6 forms that embed such an IPv4 address. So a name that resolves
// to an internal address, or a DNS server that answers with a public
// address once and 127.0.0.1 the next time (rebinding), reaches nothing
// internal: the address checked is the address dialled. Two cases are
// stricter than a range: a cloud metadata endpoint (169.254.169.254,
// fd00:ec2::254, 100.100.100.200) is reachable only when listed as a
// single address, not by falling in a wider range, and 0.0.0.0/8 and ::
// (which reach the local host) never are.
//
// # Clients
//
// A proxy on a listener only the sandbox can reach serves every client.
// One on a listener others can reach (the host's loopback) is given a
// [Options.Credential]: a client without it is answered 407, or a SOCKS5
// authentication failure, and nothing it asked for is reported.
//
// # Protocols
//
// The HTTP side serves CONNECT host:port (a tunnel, for HTTPS and
// anything else) and absolute-form requests ("GET http://host/path"),
// with keep-alive: each request on a connection is checked on its own.
// The SOCKS5 side serves CONNECT without authentication, to names (the
// proxy resolves them) and to IPv4 and IPv6 literals; BIND and UDP
// ASSOCIATE are refused as unsupported commands, so no UDP leaves through
// it. Tunnels between two TCP sockets are relayed with splice: the kernel
// moves the bytes, through a pipe a tunnel holds only while bytes are in
// it, so idle tunnels do not use up the pipe capacity the kernel allows
// the caller's user.
//
// # Refusals
//
// A refused CONNECT is answered "403" with the refusal as the reason
// phrase and as a one-line body, "corral: blocked evil.example:443 (not
// in allowed domains)"; clients such as pip and Go's put the reason
// phrase in their error. A refused plain request gets the same line as a
// 403 body, and the connection stays open for the next request. SOCKS5
// answers 0x02, "connection not allowed by ruleset". Every refusal is
// passed to [Options.OnRefusal] as a [Refusal]. A destination that is
// allowed but cannot be reached (no such name, connection refused) is not
// a refusal: HTTP answers 502 with "corral: cannot reach HOST:PORT: ..."
// and SOCKS5 the matching failure code.
//
// # Connections
//
// A proxy holds at most [Options.MaxConns] client connections open at
// once ([DefaultMaxConns] unless set), HTTP and SOCKS5 together, idle
// keep-alive ones included: each costs the caller a descriptor, and a
// tunnel a second one, so a command that opens connections in a loop
// would otherwise take all of the caller's. One more is a refusal like
// the others: its request is read, and answered 403 or "not allowed by
// ruleset" with "corral: blocked github.com:443 (over the limit of 256
// connections open through the proxy at once)", unless the rules refuse
// the destination anyway, which is then the reason given. Answering needs
// the request, so up to 32 connections over the cap are held for at most
// 5 seconds each while they are read; beyond that one is closed at once,
// unanswered and unreported, having asked for nothing yet.
//
// # Upstream proxy
//
// When [Options.Upstream] is set, allowed connections are tunnelled
// through it with CONNECT, plain HTTP included, carrying its credentials
// as Basic proxy authorization; [Options.FromEnvironment] fills it from
// HTTPS_PROXY or HTTP_PROXY and NO_PROXY. Destinations NO_PROXY names, and
// loopback, are dialled directly as above. Before the upstream is asked,
// the name is resolved and checked here as above, and refused when any
// one of its addresses is refused, since the upstream picks among them
// itself. The upstream resolves the name again: what it reaches when its
// answer differs from ours is bounded by its own policy, not by the rules.
//
// # Changes and shutdown
//
// [Proxy.SetRules] swaps the rules atomically: connections and plain
// HTTP requests from then on use the new rules; a tunnel already open
// stays open.
// [Proxy.Close] closes every listener and connection and returns when
// every goroutine the proxy started has ended.
//
// # Secrets
//
// With [Options.Secrets], the proxy adds credentials the command never
// holds: the command has each [Secret]'s Placeholder ([NewPlaceholder]),
// and in requests to the secret's Domains the proxy writes Value in its
// place, in the headers (Basic authorization's password too) and the
// query, and the body when Body says so; in the responses it puts the
// placeholder back for the value. A CONNECT to such a domain is not a
// tunnel: the proxy terminates TLS with a certificate its [CA] signs
// (made in memory; the command trusts it through [CA.Bundle]), serves
// HTTP/2 or HTTP/1.1 as the client offers (WebSocket upgrades included),
// and sends each request over its own connection, verified against
// SecretOptions.Roots ([CallerRoots]: the caller's SSL_CERT_FILE, else
// the host's bundle). A server that fails verification is refused, and
// no answer or report holds a value. A placeholder in a request the proxy
// reads that goes to another destination goes out as it is, and is told
// to SecretOptions.OnExposure. A SOCKS5 CONNECT to such a domain is
// served the same way.
//
// # Limitations
//
//   - Only TCP. A command that needs UDP (DNS, QUIC) outside the sandbox
//     gets nothing; names are resolved by the proxy, through SOCKS5's
//     remote resolution or the HTTP proxy.
//   - The proxy does not look inside TLS, but for the destinations of
//     Secrets: an allowed name is reached for
//     whatever is sent over it (domain fronting through a CDN that serves
//     an allowed name is not stopped), and plain HTTP requests are
//     forwarded, not inspected beyond their host.
//   - Clients must use the proxy; one that ignores the proxy variables
//     reaches nothing, since the sandbox has no other route.
//
// The package is an implementation part of corral with no compatibility
// promise.
package egress
