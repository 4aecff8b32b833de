package guard

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

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

// InPlaceholder tells whether directory dirfd is the host's placeholder
// of a directory staged while the command runs, reached through a
// descriptor the command took before the tmpfs covered it: a new entry
// there is to be staged too, so nothing the command makes in a placeholder
// reaches the host as it is. It returns the name the directory was staged
// under, and costs nothing while no directory is staged.
func (s *Session) InPlaceholder(dirfd int) (string, bool) {
	s.created.mu.Lock()
	none := len(s.created.placeholders) == 0
	s.created.mu.Unlock()
	if none {
		return "", false
	}
	var st unix.Stat_t
	if unix.Fstat(dirfd, &st) != nil {
		return "", false
	}
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	name, ok := s.created.placeholders[identityOf(&st)]
	return name, ok
}

// placeholder records the host's placeholder of a staged directory.
//
// Preconditions: s.created.mu is held.
func (s *Session) placeholder(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return
	}
	name := "a staged directory"
	if where, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil {
		name = path.Base(where)
	}
	if s.created.placeholders == nil {
		s.created.placeholders = map[identity]string{}
	}
	s.created.placeholders[identityOf(&st)] = name
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

// landHeads puts on the host, once the command is gone, each HEAD it made
// in h's root, which Land left empty: as it is when it makes no repository
// (git would not take it, or its directory has no objects and refs nor a
// commondir); otherwise only after the directory it would make a
// repository (or the HEAD itself, at the top of the root, which cannot be
// moved) is moved into HeldDir, and its directory is then rebuilt from its
// allowed parts like a new .git. So git on the host never sees the
// repository the command made, not even between the landing and the
// holding. done are the entries held already.
func (s *Session) landHeads(h *holder, done []string) []string {
	s.created.mu.Lock()
	var heads, rest []stagedHead
	for _, hd := range s.created.heads {
		if s.rootOf(hd.path) == h.root {
			heads = append(heads, hd)
		} else {
			rest = append(rest, hd)
		}
	}
	s.created.heads = rest
	s.created.mu.Unlock()
	// Outermost first: the HEADs inside a repository held (a linked
	// worktree's, a submodule's) are filled in its held copy, before it is
	// rebuilt from that.
	slices.SortFunc(heads, func(a, b stagedHead) int { return len(a.path) - len(b.path) })
	var out []string
	filled := make([]bool, len(heads))
	for i := range heads {
		if !filled[i] {
			out = append(out, h.landHead(heads, i, filled, done)...)
		}
	}
	for _, hd := range heads {
		unix.Close(hd.placeholder)
	}
	return out
}

// landHead lands heads[i], and with it, when it makes a repository, the
// HEADs inside that repository, marking each filled.
func (h *holder) landHead(heads []stagedHead, i int, filled []bool, done []string) []string {
	hd := heads[i]
	rel := relOf(h.root, hd.path)
	target := path.Dir(rel)
	filled[i] = true
	if !validHead(hd.content) || !repoParts(h.view+"/"+target) || inHeld(target, done) {
		if err := fillHead(hd); err != nil {
			return []string{fmt.Sprintf("%s: dropped, its staged content could not be copied (%v)", hd.path, err)}
		}
		return nil
	}
	inside := []stagedHead{hd}
	h.repo = true
	if target == "." {
		target, h.repo = rel, false
	} else {
		for j := range heads {
			if !filled[j] && inHeld(relOf(h.root, heads[j].path), []string{target}) {
				inside, filled[j] = append(inside, heads[j]), true
			}
		}
	}
	h.fill = func() error {
		var errs []error
		for _, in := range inside {
			errs = append(errs, fillHead(in))
		}
		return errors.Join(errs...)
	}
	defer func() { h.repo, h.fill = false, nil }()
	return h.hold(target)
}

// repoParts reports whether dir has what, with a HEAD git takes, makes it
// a repository: objects and refs (of any kind: a link's target may come
// later), or a commondir naming where they are.
func repoParts(dir string) bool {
	has := func(name string) bool {
		var st unix.Stat_t
		return unix.Lstat(dir+"/"+name, &st) == nil
	}
	return has("commondir") || has("objects") && has("refs")
}

// inHeld reports whether rel lies in one of the entries held already.
func inHeld(rel string, done []string) bool {
	return slices.ContainsFunc(done, func(d string) bool { return rel == d || strings.HasPrefix(rel, d+"/") })
}

// fillHead writes a staged HEAD's content into its placeholder, wherever
// that is by now.
func fillHead(hd stagedHead) error {
	return replacePlaceholder(hd.placeholder, func(f *os.File) error {
		_, err := f.Write(hd.content)
		return err
	})
}
