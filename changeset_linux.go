package corral

import (
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

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
	pidfd, err := unix.PidfdOpen(p.Pid(), 0)
	if err != nil {
		pidfd = -1 // kernels before 5.3: unlock when the command exits
	}
	return &lockedProcess{process: p, pidfd: pidfd, unlock: unlock}, nil
}

// lockedProcess is a sandbox holding its changeset's lock.
type lockedProcess struct {
	process
	pidfd  int
	unlock func()
	once   sync.Once
}

func (p *lockedProcess) Wait() (syscall.WaitStatus, error) {
	st, err := p.process.Wait()
	p.once.Do(p.release)
	return st, err
}

// release waits for the sandbox's init to exit, which takes every process
// left in the sandbox with it, then unlocks. The init exits right after
// reporting the command's status; one that lingers is killed.
func (p *lockedProcess) release() {
	defer p.unlock()
	if p.pidfd < 0 {
		return
	}
	defer unix.Close(p.pidfd)
	fds := []unix.PollFd{{Fd: int32(p.pidfd), Events: unix.POLLIN}}
	for killed := false; ; {
		n, err := unix.Poll(fds, 2000)
		switch {
		case err == unix.EINTR:
		case err != nil || n > 0 || killed:
			return
		default:
			p.process.Kill()
			killed = true
		}
	}
}
