// Package browser runs Chromium headless inside a corral sandbox and serves
// its DevTools protocol (CDP) to the caller on 127.0.0.1.
//
// The browser is a sandboxed command like any other: the host read-only,
// hidden paths and credential stores unreadable (the user's own browser
// profiles among them), a private /tmp and /dev/shm, and the sandbox's
// network policy, which Chromium follows through corral's proxy. Chromium's
// own sandbox needs namespaces corral forbids inside, so it runs with
// --no-sandbox: corral is the sandbox.
//
// Chromium speaks CDP over a pipe (--remote-debugging-pipe, descriptors 3
// and 4), never a TCP port inside the sandbox. The caller serves the
// endpoint (http://127.0.0.1:PORT/TOKEN): /json/version, /json/list,
// /json/new and the WebSockets of the browser and of each page. Several
// clients share the pipe: each browser client gets a browser session of its
// own, message ids are remapped, and responses, events and flattened
// sessions go to the client that owns them.
//
// # Limitations
//
// Chromium needs unix sockets of its own, so the sandbox allows creating
// them (corral.Config.AllowUnixSockets). With --net allow, Chromium reaches
// the proxy through SOCKS5 without a credential, which only the sandbox's
// own network namespace gives (the full rung).
package browser
