package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/corralhq/corral"
)

// WithScope gives cfg, a sandbox its caller configured itself (`corral run
// --scope KEY`), the persistent state of the scope key: a layered home and
// a /tmp that last from one use of the key to the next, with every
// sandbox's state hidden. The key is recorded in the registry under no
// agent, with the same hot/cold rule on cfg's hash as Session applies, and
// the state directory is pruned when due.
func (rt *Runtime) WithScope(cfg corral.Config, key string) (corral.Config, error) {
	cfg, _, err := rt.withScope(cfg, key, "", scopeHash(cfg))
	return cfg, err
}

func (rt *Runtime) withScope(cfg corral.Config, key, kind, hash string) (corral.Config, stateDirs, error) {
	if key == "" {
		return cfg, stateDirs{}, fmt.Errorf("agent: empty scope key")
	}
	if _, err := rt.maybePrune(); err != nil {
		return cfg, stateDirs{}, err
	}
	if _, _, err := rt.claim(key, "", hash); err != nil {
		return cfg, stateDirs{}, err
	}
	if kind != "" {
		if err := rt.setKind(key, kind); err != nil {
			return cfg, stateDirs{}, err
		}
	}
	dirs := rt.dirsOf(Slug(key))
	if err := os.MkdirAll(dirs.root, 0o700); err != nil {
		return cfg, dirs, fmt.Errorf("agent: state of %s: %w", key, err)
	}
	cfg.PersistHome, cfg.PersistTmp = dirs.home, dirs.tmp
	cfg.HiddenPaths = append(cfg.HiddenPaths, rt.state)
	return cfg, dirs, nil
}

// scopeHash hashes the parts of a corral.Config that shape a sandbox.
func scopeHash(c corral.Config) string {
	s := fmt.Sprintf("%q", []any{c.Mode, c.Workspace, c.WorkspaceDest, c.WritablePaths, c.ReadOnlyPaths, c.HiddenPaths,
		c.Reveal, c.Binds, c.Network, c.Env, c.AllowPlanting, c.AllowHome, c.AllowUnixSockets, c.AllowPtrace})
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}
