package browser

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/corralhq/corral"
)

// Dir is the browser's directory inside the sandbox, holding its home
// and profile: under its /tmp, private, or the scope's when the caller
// keeps one (corral.Config.PersistTmp), so that a scope's profile lasts
// from one browser to the next. On a rung without a private /tmp it is
// under the command's own temporary directory ($TMPDIR) instead.
const Dir = "/tmp/corral-browser"

// Options configure Launch. The zero value is usable.
type Options struct {
	// Executable is Chromium's path; empty means Find's.
	Executable string
	// Port is the endpoint's port on 127.0.0.1; zero picks a free one.
	Port int
	// Args are further flags for Chromium.
	Args []string
	// Stderr receives Chromium's log; nil discards it (its last lines
	// still explain an exit at start).
	Stderr io.Writer
}

// Browser is a running Chromium and its endpoint.
type Browser struct {
	endpoint string
	sb       *corral.Sandbox
	cmd      *corral.Cmd
	srv      *server
	cancel   context.CancelFunc
	done     chan struct{}
	err      error // how Chromium ended, once done is closed
	close    sync.Once
}

// Configure returns cfg as the browser needs it: Chromium makes unix
// sockets of its own (its process singleton, among others).
func Configure(cfg corral.Config) corral.Config {
	cfg.AllowUnixSockets = true
	return cfg
}

// script makes the browser's directory and points Chromium at it, with
// HOME and TMPDIR there too (the caller's TMPDIR may name a path the
// sandbox hides), and at the sandbox's proxy. It takes the proxy as
// SOCKS5, which resolves names at the proxy and makes a refused name a
// network error in the page (an HTTP proxy's refusal would be shown as a
// page). A proxy that wants a credential (a rung without a network
// namespace) cannot be used: Chromium gives none to a proxy.
const script = `p=${ALL_PROXY:-}
case $p in
*@*) echo "corral browser: the sandbox's proxy needs a credential, which Chromium cannot give (no network namespace on this rung); use --net host or none" >&2; exit 125;;
socks5h://*) p=socks5://${p#socks5h://};;
esac
d=` + Dir + `
if ! mkdir -p "$d/home" 2>/dev/null; then
  d=${TMPDIR:-/nonexistent}/corral-browser
  mkdir -p "$d/home" || exit 125
fi
export HOME="$d/home" TMPDIR="$d"
c=$1; shift
exec "$c" "--user-data-dir=$d/profile" ${p:+"--proxy-server=$p"} "$@"`

// flags are Chromium's, besides the proxy: headless, without its own
// sandbox (corral is the sandbox), CDP on descriptors 3 and 4, and none of
// the background traffic a fresh profile makes.
func flags(extra []string) []string {
	f := []string{
		"--headless", "--no-sandbox", "--remote-debugging-pipe",
		"--no-first-run", "--no-default-browser-check", "--disable-gpu",
		"--disable-crash-reporter", "--disable-breakpad",
		"--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-default-apps", "--password-store=basic",
		"--use-mock-keychain", "--mute-audio", "--hide-scrollbars",
		"--disable-extensions", "--disable-client-side-phishing-detection",
		"--disable-domain-reliability", "--disable-field-trial-config",
		"--disable-features=Translate,MediaRouter,OptimizationHints,OptimizationGuideModelDownloading,OptimizationHintsFetching,AutofillServerCommunication",
	}
	return append(append(f, extra...), "about:blank")
}

// Launch starts Chromium in a sandbox made from cfg (see Configure) and
// serves its endpoint. The browser ends with ctx, with Close, or when the
// caller dies (the sandbox's rule).
func Launch(ctx context.Context, cfg corral.Config, opts Options) (*Browser, error) {
	exe := opts.Executable
	if exe == "" {
		var err error
		if exe, err = Find(); err != nil {
			return nil, err
		}
	}
	sb, err := corral.New(Configure(cfg))
	if err != nil {
		return nil, err
	}
	b, err := start(ctx, sb, exe, opts)
	if err != nil {
		sb.Close()
		return nil, err
	}
	return b, nil
}

func start(ctx context.Context, sb *corral.Sandbox, exe string, opts Options) (*Browser, error) {
	toChrome, ours, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	theirs, fromChrome, err := os.Pipe()
	if err != nil {
		toChrome.Close()
		ours.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	log := &tail{}
	var stderr io.Writer = log
	if opts.Stderr != nil {
		stderr = io.MultiWriter(log, opts.Stderr)
	}
	c := sb.Command(ctx, "/bin/sh", append([]string{"-c", script, "sh", exe}, flags(opts.Args)...)...)
	c.Stderr = stderr
	c.ExtraFiles = []*os.File{toChrome, fromChrome}
	err = c.Start()
	toChrome.Close()
	fromChrome.Close()
	if err != nil {
		cancel()
		ours.Close()
		theirs.Close()
		return nil, err
	}
	b := &Browser{sb: sb, cmd: c, cancel: cancel, done: make(chan struct{})}
	r := newRelay(newPipe(ours, theirs))
	go r.run()
	go func() {
		b.err = c.Wait()
		ours.Close()
		theirs.Close()
		close(b.done)
	}()
	if err := b.serve(ctx, r, opts.Port); err != nil {
		if errors.Is(err, errClosed) {
			<-b.done // it ended by itself: say how
			b.Close()
			return nil, fmt.Errorf("browser: Chromium ended at start (%v): %s", b.err, log.last())
		}
		b.Close()
		return nil, err
	}
	return b, nil
}

// serve waits for Chromium's first answer, then listens.
func (b *Browser) serve(ctx context.Context, r *relay, port int) error {
	version, err := r.call(ctx, "", "Browser.getVersion", struct{}{})
	if err != nil {
		return fmt.Errorf("browser: no answer from Chromium: %w", err)
	}
	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("browser: endpoint: %w", err)
	}
	addr := ln.Addr().String()
	s := &server{relay: r, token: randomHex(16), id: randomHex(16), ln: ln, version: version}
	s.base = "http://" + addr + "/" + s.token
	s.wsBase = "ws://" + addr + "/" + s.token
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	b.srv, b.endpoint = s, s.base
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Endpoint is the DevTools endpoint, http://127.0.0.1:PORT/TOKEN: the
// token is the only credential, so the endpoint is a secret.
func (b *Browser) Endpoint() string { return b.endpoint }

// WebSocketURL is the browser's WebSocket (/json/version's
// webSocketDebuggerUrl), for clients that take it rather than the endpoint.
func (b *Browser) WebSocketURL() string { return b.srv.wsBase + "/devtools/browser/" + b.srv.id }

// Done is closed when Chromium has ended.
func (b *Browser) Done() <-chan struct{} { return b.done }

// Err is how Chromium ended, once Done is closed.
func (b *Browser) Err() error {
	<-b.done
	return b.err
}

// Close ends Chromium and every process of its sandbox, and the endpoint.
func (b *Browser) Close() error {
	b.close.Do(func() {
		if b.srv != nil {
			b.srv.srv.Close()
		}
		b.cancel()
		<-b.done
		b.sb.Close()
	})
	return nil
}

// Version is Browser.getVersion's product, e.g. "Chrome/156.0.0.0".
func (b *Browser) Version(ctx context.Context) (string, error) {
	res, err := b.srv.relay.call(ctx, "", "Browser.getVersion", struct{}{})
	if err != nil {
		return "", err
	}
	var v struct {
		Product string `json:"product"`
	}
	err = json.Unmarshal(res, &v)
	return v.Product, err
}

// tail keeps the last lines written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = t.buf[len(t.buf)-tailSize:]
	}
	return len(p), nil
}

func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, nil)))
	if s == "" {
		return "no output"
	}
	return s
}
