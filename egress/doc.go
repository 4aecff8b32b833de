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
// It resolves each allowed name itself and dials only the address it
// resolved, never one the client supplied, and refuses addresses that are
// not the public internet (loopback, private, link-local, CGNAT, cloud
// metadata) unless Rules allows their range explicitly.
//
// The package is an implementation part of corral with no compatibility
// promise.
package egress
