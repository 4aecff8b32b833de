package corral

import (
	"sync"
	"syscall"

	"github.com/corralhq/corral/mounts"
)

// overlays mounts the workspace as overlayfs when a changeset is configured.
func overlays(s *spec) []mounts.OverlayRoot {
	if s.Changeset == nil {
		return nil
	}
	return []mounts.OverlayRoot{{Path: s.Workspace, Upper: s.Changeset.UpperDir(), Work: s.Changeset.WorkDir()}}
}

// startInChangeset starts a sandbox with the changeset locked until every
// process in it is gone: overlayfs does not support two live mounts of one
// upper directory, and Apply must not run under one.
func (b *linuxBackend) startInChangeset(req *startRequest) (process, error) {
	unlock, err := b.changeset.Lock()
	if err != nil {
		return nil, &SetupError{Layer: "overlay", Path: b.changeset.Dir(), Err: err}
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

func (p *lockedProcess) Wait() (syscall.WaitStatus, error) {
	defer p.once.Do(p.unlock)
	return p.process.Wait()
}
