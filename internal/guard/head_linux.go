package guard

import (
	"bytes"
	"path"

	"golang.org/x/sys/unix"
)

// headState is what a directory's HEAD makes of it for git.
type headState int

const (
	// noHead: none, or one git never takes and no write can change (a
	// directory, a symlink out of refs/, a FIFO).
	noHead headState = iota
	// inertHead: a regular file git does not take now, which a write to
	// it could change.
	inertHead
	// repoHead: a HEAD git takes (or one written through another link):
	// the directory is a git directory, or becomes one with objects and
	// refs, in place or where its commondir says.
	repoHead
)

// headOf says what dir's HEAD makes of dir.
func headOf(dir string) headState {
	p := path.Join(dir, HeadName)
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return noHead
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		buf := make([]byte, 256)
		n, err := unix.Readlink(p, buf)
		if err == nil && bytes.HasPrefix(buf[:n], []byte("refs/")) {
			return repoHead
		}
		return noHead
	case unix.S_IFREG:
	default:
		return noHead
	}
	if st.Nlink > 1 {
		return repoHead // its content can change through the other name
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return repoHead // unknown: taken as one
	}
	defer unix.Close(fd)
	buf := make([]byte, 255)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return repoHead
	}
	if validHead(buf[:n]) {
		return repoHead
	}
	return inertHead
}

// validHead reports whether git would take b, a HEAD file's first bytes,
// for a HEAD: "ref:" and a name under refs/, or an object name. It errs on
// the side of yes.
func validHead(b []byte) bool {
	if rest, ok := bytes.CutPrefix(b, []byte("ref:")); ok {
		return bytes.HasPrefix(bytes.TrimLeft(rest, " \t"), []byte("refs/"))
	}
	if len(b) < 40 {
		return false
	}
	for _, c := range b[:40] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// gitInForce reports whether the git guard is in force: .git is among the
// names, which AllowPlanting can take out.
func (s *Session) gitInForce() bool {
	for _, n := range s.names {
		if n == GitDir {
			return true
		}
	}
	return false
}

// StagesHead reports whether a new HEAD (a file, or anything else but a
// directory) in directory dirfd, whose path as the sandbox shows it is dir
// ("" when too deep to name), is to be staged as a protected entry: the
// git guard is in force, the directory lies in a writable root, and not in
// content already staged (a git directory staged when the command started
// or made since, or a new protected directory), whose HEAD never reaches
// the host but through the merge at exit.
func (s *Session) StagesHead(dirfd int, dir string) bool {
	if !s.gitInForce() || dir != "" && s.rootOf(dir) == "" {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(dirfd, &st) != nil {
		return true
	}
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	return !s.stagedDevs[st.Dev]
}

// stagedDev records that the filesystem holding fd is staged content.
func (s *Session) stagedDev(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return
	}
	if s.stagedDevs == nil {
		s.stagedDevs = map[uint64]bool{}
	}
	s.stagedDevs[st.Dev] = true
}

// headLanded says what to hold for a HEAD staged while the command ran and
// landed at rel (in the root seen through view): its directory, rebuilt
// from its allowed parts, when that is a repository now; the HEAD itself
// when the directory is the root, which cannot be moved; nothing when git
// does not take the directory for a repository, where it stays as made.
func headLanded(view, rel string) string {
	dir := path.Dir(rel)
	if !bareRepo(view + "/" + dir) {
		return ""
	}
	if dir == "." {
		return rel
	}
	return dir
}
