package corral

import (
	"sync"

	"github.com/corralhq/corral/limits"
	"github.com/corralhq/corral/mounts"
)

// overlays mounts every root of the changeset, when one is configured, as
// overlayfs: the workspace and the ChangesetPaths.
func overlays(s *spec) []mounts.OverlayRoot {
	if s.Changeset == nil {
		return nil
	}
	return s.atDests(overlayRoots(s.Changeset.Roots()))
}

// startInChangeset starts a sandbox with the changeset locked until every
// process in it is gone: overlayfs does not support two live mounts of one
// upper directory, and Apply must not run under one.
func (b *linuxBackend) startInChangeset(req *startRequest) (process, error) {
	unlock, err := b.changeset.Lock()
	if err != nil {
		return nil, &SetupError{Layer: LayerOverlay, Path: b.changeset.Dir(), Err: err}
	}
	p, err := b.startJail(req)
	if err != nil {
		unlock()
		return nil, err
	}
	return &lockedProcess{process: p, unlock: unlock}, nil
}

// lockedProcess is a sandbox holding its changeset's lock. The backend's
// Wait returns once the sandbox's PID namespace is empty, so nothing in it
// can write to the upper directory after the unlock.
type lockedProcess struct {
	process
	unlock func()
	once   sync.Once
}

func (p *lockedProcess) Wait() (exit, error) {
	defer p.once.Do(p.unlock)
	return p.process.Wait()
}

// Dropped passes on what the sandbox reports.
func (p *lockedProcess) Dropped() []string {
	if d, ok := p.process.(dropper); ok {
		return d.Dropped()
	}
	return nil
}

// Violations passes on what the sandbox reports.
func (p *lockedProcess) Violations() []Violation {
	if r, ok := p.process.(reporter); ok {
		return r.Violations()
	}
	return nil
}

// LimitsHit passes on what the sandbox reports.
func (p *lockedProcess) LimitsHit() []limits.Name {
	if h, ok := p.process.(limitHitter); ok {
		return h.LimitsHit()
	}
	return nil
}
