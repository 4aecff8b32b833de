package agent

import (
	"github.com/corralhq/corral"
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
