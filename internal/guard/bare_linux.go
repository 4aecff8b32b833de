package guard

import (
	"path"

	"golang.org/x/sys/unix"
)

// bareRepo reports whether dir is a bare repository (git's own test: a
// HEAD, an objects and a refs directory), which git run inside it on the
// host would take its config and hooks from like a .git directory's.
func bareRepo(dir string) bool {
	kinds := map[string]uint32{"HEAD": unix.S_IFREG, "objects": unix.S_IFDIR, "refs": unix.S_IFDIR}
	for name, kind := range kinds {
		var st unix.Stat_t
		if unix.Lstat(path.Join(dir, name), &st) != nil || st.Mode&unix.S_IFMT != kind {
			return false
		}
	}
	return true
}

// bareAt reports whether dir, whose listing has a HEAD, is a bare
// repository, and hands it to s.bare when set. The walk does not descend
// into one.
func (s *Session) bareAt(dir string, st *unix.Stat_t) bool {
	if !bareRepo(dir) {
		return false
	}
	if s.bare != nil {
		s.bare(dir, st)
	}
	return true
}
