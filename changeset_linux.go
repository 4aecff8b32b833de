package corral

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"sync"

	"github.com/corralhq/corral/changeset"
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

// maxCopyUp bounds the originals copyUpUnmapped copies; maxUnmappedNamed
// the ones it names when they cannot be copied.
const (
	maxCopyUp        = 10000
	maxUnmappedNamed = 5
)

// copyUpUnmapped makes the user's originals of a group an unprivileged
// sandbox cannot map changeable: overlayfs would have to give their copies
// that group inside the user namespace, which has no id for it, and the
// command would see only EOVERFLOW ("Value too large for defined data
// type"). The caller, on the host, may give a copy any of the user's
// groups, so it copies them up itself (see changeset.Changeset.CopyUp)
// before any sandbox mounts the changeset. What it cannot copy (a group
// that is not the user's, more than maxCopyUp files) is named through
// logf. Root maps every group and needs none of this.
func copyUpUnmapped(cs *changeset.Changeset, logf func(string, ...any)) error {
	if os.Geteuid() == 0 {
		return nil
	}
	unlock, err := cs.Lock()
	if err != nil {
		return &SetupError{Layer: LayerOverlay, Path: cs.Dir(), Err: err}
	}
	defer unlock()
	gid := uint32(os.Getgid())
	found, total, err := cs.UnmappedGroups(uint32(os.Getuid()), func(g uint32) bool { return g == gid }, maxCopyUp)
	if err != nil {
		return &SetupError{Layer: LayerOverlay, Path: cs.Dir(), Err: err}
	}
	failed := total - len(found)
	for _, u := range found {
		err := cs.CopyUp(u)
		if err == nil {
			continue
		}
		if failed++; failed <= maxUnmappedNamed && logf != nil {
			reason := "its group " + groupText(u.GID) + " is not mapped in the sandbox and not one of yours"
			if !errors.Is(err, fs.ErrPermission) {
				reason = err.Error()
			}
			logf("corral: cannot change %s in the changeset: %s", changeset.Quote(u.RealPath()), reason)
		}
	}
	if failed > maxUnmappedNamed && logf != nil {
		logf("corral: and %d more files of the changeset cannot be changed: their group is not mapped in the sandbox", failed-maxUnmappedNamed)
	}
	if failed > 0 && logf != nil {
		logf("corral: an unprivileged sandbox maps only your own group %s; change their group (chgrp) or run as root to change them", groupText(gid))
	}
	return nil
}

// groupText is a group id with its name, as "27 (sudo)".
func groupText(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return id + " (" + changeset.Quote(g.Name) + ")"
	}
	return id
}
