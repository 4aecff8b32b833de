package agent

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/corralhq/corral/config"
)

// Built-in prune rules, for sandboxes whose agent the config does not name.
const (
	DefaultPruneIdle   = 24 * time.Hour
	DefaultPruneMaxAge = 7 * 24 * time.Hour
	// PruneEvery is the least time between two automatic prunes of a
	// state directory, across every process that shares it.
	PruneEvery = 5 * time.Minute
)

// ErrInUse is returned for a sandbox a command is running in.
var ErrInUse = errors.New("in use by a running command")

// Rules say when a sandbox is pruned: idle longer than Idle, or created
// longer than MaxAge ago. Zero turns a rule off.
type Rules struct {
	Idle, MaxAge time.Duration
}

// DefaultRules returns the built-in ones.
func DefaultRules() Rules { return Rules{Idle: DefaultPruneIdle, MaxAge: DefaultPruneMaxAge} }

// due reports whether e is to be pruned at now.
func (r Rules) due(e Entry, now time.Time) bool {
	return r.Idle > 0 && now.Sub(e.LastUsed) > r.Idle || r.MaxAge > 0 && now.Sub(e.Created) > r.MaxAge
}

// rulesFor returns the prune rules of agent in cfg: the defaults for a
// sandbox of no agent (`corral run --scope`) and, when known is false, for
// an agent cfg does not name; known reports whether cfg named it.
func rulesFor(cfg *config.Config, agent string) (r Rules, known bool) {
	if a, ok := cfg.Agent(agent); ok {
		return Rules{Idle: a.Sandbox.PruneIdle, MaxAge: a.Sandbox.PruneMaxAge}, true
	}
	return DefaultRules(), agent == ""
}

// Prune removes the sandboxes due by their agent's rules, with their state,
// now; an agent the config does not name gets DefaultRules. A sandbox this
// Runtime holds, or that a command is running in, is kept. It returns the
// entries removed.
func (rt *Runtime) Prune() ([]Entry, error) { return rt.prune(true) }

// maybePrune prunes at most every PruneEvery, leaving the sandboxes of
// agents the config does not name to the processes that know their rules.
func (rt *Runtime) maybePrune() ([]Entry, error) { return rt.prune(false) }

func (rt *Runtime) prune(force bool) ([]Entry, error) {
	keep := rt.liveKeys()
	var removed []Entry
	err := rt.reg.update(func(d *registryDoc) (bool, error) {
		now := rt.now()
		if !force && !d.LastPrune.IsZero() && now.Sub(d.LastPrune) < PruneEvery && !d.LastPrune.After(now) {
			return false, nil
		}
		d.LastPrune = now
		var errs []error
		d.Sandboxes = slices.DeleteFunc(d.Sandboxes, func(e Entry) bool {
			rules, known := rulesFor(rt.cfg, e.Agent)
			if slices.Contains(keep, e.Key) || !known && !force || !rules.due(e, now) {
				return false
			}
			busy, err := rt.dirsOf(e.Slug).wipe(true)
			if err != nil {
				errs = append(errs, fmt.Errorf("prune %s: %w", e.Key, err))
			}
			if busy || err != nil {
				return false
			}
			removed = append(removed, e)
			return true
		})
		return true, errors.Join(errs...)
	})
	return removed, err
}

// Remove deletes the sandbox named key, with its state. It fails with
// ErrInUse while a command runs in it.
func (rt *Runtime) Remove(key string) error {
	rt.forget(key)
	return rt.reg.Update(func(es []Entry) ([]Entry, bool, error) {
		i := find(es, key)
		if i < 0 {
			return es, false, fmt.Errorf("no sandbox %q", key)
		}
		busy, err := rt.dirsOf(es[i].Slug).wipe(true)
		if err != nil {
			return es, false, err
		}
		if busy {
			return es, false, fmt.Errorf("sandbox %q: %w", key, ErrInUse)
		}
		return slices.Delete(es, i, i+1), true, nil
	})
}

// Recreate discards what the sandbox named key kept between commands (its
// home's changes and /tmp; its own workspace stays): the next use builds it
// afresh from the current configuration.
func (rt *Runtime) Recreate(key string) error {
	rt.forget(key)
	return rt.reg.Update(func(es []Entry) ([]Entry, bool, error) {
		i := find(es, key)
		if i < 0 {
			return es, false, fmt.Errorf("no sandbox %q", key)
		}
		busy, err := rt.dirsOf(es[i].Slug).wipe(false)
		if err != nil {
			return es, false, err
		}
		if busy {
			return es, false, fmt.Errorf("sandbox %q: %w", key, ErrInUse)
		}
		es[i].ConfigHash, es[i].Stale = "", false
		return es, true, nil
	})
}

// forget closes this Runtime's sandbox for key, if it holds one.
func (rt *Runtime) forget(key string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if l := rt.live[key]; l != nil {
		l.close()
		delete(rt.live, key)
	}
}
