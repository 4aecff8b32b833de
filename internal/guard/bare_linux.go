package guard

import "golang.org/x/sys/unix"

// bareRepo reports whether dir is, or may become, a git directory other
// than a .git: its HEAD is one git takes (headOf). git run inside it on the
// host would take its config and hooks from it (or from where its
// commondir says) like a .git directory's. This errs on the side of yes:
// objects and refs may be missing, or lie where commondir names.
func bareRepo(dir string) bool { return headOf(dir) == repoHead }

// bareAt reports whether dir, whose listing has a HEAD, is a bare
// repository, and hands it to s.bare when set; a HEAD git does not take
// but a write could change goes to s.inert when set. The walk does not
// descend into a bare repository. Neither is done when .git is not among
// the names in force.
func (s *Session) bareAt(dir string, st *unix.Stat_t, top bool) bool {
	if !s.gitInForce() {
		return false // AllowPlanting lists .git: git is not guarded
	}
	switch headOf(dir) {
	case repoHead:
		if top {
			return false // a writable root itself is not staged
		}
		if s.bare != nil {
			s.bare(dir, st)
		}
		return true
	case inertHead:
		if s.inert != nil {
			s.inert(join(dir, HeadName))
		}
	}
	return false
}
