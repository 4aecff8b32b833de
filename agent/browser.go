package agent

import (
	"context"
	"errors"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/browser"
)

// KindBrowser is the Entry.Kind of a scope's browser.
const KindBrowser = "browser"

// BrowserKey is the registry key of the browser of scope: beside the
// scope's own sandbox, listed, pruned and removed by the same rules.
func BrowserKey(scope string) string { return "browser:" + scope }

// WithBrowserScope is WithScope for the browser of scope (`corral browser
// --scope`): its entry, of kind browser, is keyed BrowserKey(scope), and
// dir is its state directory, where the caller keeps what it needs to
// find a browser running there (its lock and endpoint). Its profile lives
// in the scope's /tmp. hash is the browser's configuration, which the
// caller knows better than cfg tells (its workspace may be a throwaway
// one): the entry's hot/cold rule applies to it.
func (rt *Runtime) WithBrowserScope(cfg corral.Config, scope, hash string) (_ corral.Config, dir string, err error) {
	cfg, dirs, err := rt.withScope(cfg, BrowserKey(scope), KindBrowser, hash)
	return cfg, dirs.root, err
}

// setKind records the kind of the entry key.
func (rt *Runtime) setKind(key, kind string) error {
	return rt.reg.Update(func(es []Entry) ([]Entry, bool, error) {
		i := find(es, key)
		if i < 0 || es[i].Kind == kind {
			return es, false, nil
		}
		es[i].Kind = kind
		return es, true, nil
	})
}

// Browser returns the browser of the session's sandbox, starting it at the
// first call: Chromium headless in a sandbox of its own made from the
// session's configuration (its paths, hidden stores and network policy),
// with a throwaway profile. Its Endpoint is the DevTools endpoint to give a
// CDP client. The sessions of one persistent sandbox share it; it ends
// with the sandbox (Runtime.Close, Remove, Recreate, a rebuild after a
// configuration change) and with the process. ctx bounds only the start.
func (s *Session) Browser(ctx context.Context) (*browser.Browser, error) {
	if !s.Sandboxed || s.rt == nil {
		return nil, errors.New("agent: the session runs unsandboxed: no sandboxed browser for it")
	}
	rt := s.rt
	rt.mu.Lock()
	defer rt.mu.Unlock()
	l := rt.live[s.Key]
	if l == nil || l.sb != s.Sandbox {
		return nil, errors.New("agent: the session's sandbox was closed")
	}
	if l.browser != nil {
		select {
		case <-l.browser.Done():
			l.browser.Close()
			l.browser = nil
		default:
			return l.browser, nil
		}
	}
	cfg := s.cfg
	// The sandbox's home and /tmp stay its own: two sandboxes do not
	// share them.
	cfg.PersistHome, cfg.PersistTmp = "", ""
	b, err := launchBrowser(ctx, cfg)
	if err != nil {
		return nil, err
	}
	l.browser = b
	return b, nil
}

// launchBrowser starts a browser that ctx does not end.
func launchBrowser(ctx context.Context, cfg corral.Config) (*browser.Browser, error) {
	type result struct {
		b   *browser.Browser
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := browser.Launch(context.Background(), cfg, browser.Options{})
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.b != nil {
				r.b.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
