package guard

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/pathtree"
)

// maxStaged bounds the protected entries one command may create: each is a
// mount in the sandbox's namespace. Past it, creating one is refused.
const maxStaged = 256

// created are the protected entries a command created while it ran, each
// an empty placeholder on the host (a file's a socket node, which no one
// can open to write through) with its content staged in a tmpfs of
// the init's mounted over it in the sandbox; Finish puts the content on
// the host once the command is gone and deals with each entry as with any
// new one.
type created struct {
	mu      sync.Mutex
	entries []createdEntry
	refused map[string]bool
	// landed and notes are what Land did, for Finish.
	landed []string
	notes  []string
	// heads are the staged HEADs Land left empty on the host, for Finish
	// to fill once it has moved a directory their content would make a
	// repository out of the host's sight (see Session.landHeads).
	heads []stagedHead
	// placeholders are the host's placeholders of the staged directories,
	// with the names they were staged under (see InPlaceholder).
	placeholders map[identity]string
}

// stagedHead is a HEAD the command made: its placeholder on the host and
// what the command wrote to it.
type stagedHead struct {
	path        string
	placeholder int
	content     []byte
}

// maxHead bounds a staged HEAD's content: git reads 255 bytes of one.
const maxHead = 64 << 10

type createdEntry struct {
	placeholder int // the host's placeholder, opened before anything covered it
	content     int // the staged directory (a tmpfs's root) or file
	dir         bool
}

// Stages reports whether s can stage protected entries a command creates:
// it has the roots' clones and a tmpfs, and some name is in force.
func (s *Session) Stages() bool {
	return s != nil && s.degraded == nil && len(s.names) > 0 && len(s.roots) > 0
}

// MayProtect tells whether Protects, HoldsProtected, StagesHead or Refuses
// could hold for an entry called name in some directory: whether name is an
// element of a name in force, HEAD where git is guarded, or one Refuses
// refuses. The creator asks it first, which costs no look at the
// directory's path.
func (s *Session) MayProtect(name string) bool {
	if s.parts == nil {
		s.parts = map[string]bool{}
		for _, n := range slices.Concat(s.names, alternates) {
			for _, p := range strings.Split(n, "/") {
				s.parts[p] = true
			}
		}
		// A HEAD is staged where git is guarded (see StagesHead).
		s.parts[HeadName] = s.gitInForce()
		// The targets the host follows a protected entry to, and the
		// directories above them (see linkedName).
		for _, t := range s.linked {
			for p := range strings.SplitSeq(relOf(s.rootOf(t), t), "/") {
				s.parts[p] = true
			}
		}
	}
	if s.parts[name] {
		return true
	}
	_, ok := s.anywhereName(name) // a pattern's (*.code-workspace)
	return ok
}

// Protects tells whether a new entry name in directory dir (an absolute,
// clean path as the sandbox shows it) is protected, and by which listed
// name: names marked Anywhere in any directory of a writable root, the
// others at the top of the innermost root holding dir.
//
// A dir of "" stands for a directory whose path could not be told (nested
// deeper than a path can name): a name listed for any depth is protected
// there, failing closed.
func (s *Session) Protects(dir, name string) (string, bool) {
	if name == "" || name == "." || name == ".." {
		return "", false
	}
	root := s.rootOf(dir)
	if root == "" && dir != "" {
		return "", false
	}
	if n, ok := s.anywhereName(name); ok {
		return n, true
	}
	if root == "" {
		return "", false
	}
	if exact, _ := s.linkedName(path.Join(dir, name)); exact {
		return name, true // a target the host follows a protected entry to
	}
	if n, _, exact, _, _ := s.topInHome(path.Join(dir, name)); exact {
		return n, true // a start-up name of the home's
	}
	rel := path.Join(relOf(root, dir), name)
	for _, n := range s.topsInForce() {
		if n == rel {
			return n, true
		}
	}
	return "", false
}

// HoldsProtected tells whether a directory renamed to name in dir could
// bring a protected entry with it: the name is protected, or it is a
// directory above one listed for the top of a root (.config for
// .config/fish).
func (s *Session) HoldsProtected(dir, name string) (string, bool) {
	if n, ok := s.Protects(dir, name); ok {
		return n, true
	}
	root := s.rootOf(dir)
	if root == "" {
		return "", false
	}
	if _, above := s.linkedName(path.Join(dir, name)); above {
		return name, true
	}
	if _, _, _, above, _ := s.topInHome(path.Join(dir, name)); above {
		return name, true
	}
	rel := path.Join(relOf(root, dir), name)
	for _, n := range s.topsInForce() {
		if strings.HasPrefix(n, rel+"/") {
			return n, true
		}
	}
	return "", false
}

// relOf is p relative to root, which holds it ("." for root itself).
func relOf(root, p string) string {
	rel, _ := pathtree.Rel(root, p)
	return rel
}

// rootOf is the innermost writable root holding dir, or "".
func (s *Session) rootOf(dir string) string {
	best := ""
	if dir == "" {
		return ""
	}
	for _, r := range s.roots {
		if len(r.path) > len(best) && pathtree.Within(dir, r.path) {
			best = r.path
		}
	}
	return best
}

// Staged records a protected entry created while the command runs:
// placeholder is the host's empty directory or file, opened before content
// (a directory or file of the init's, mounted over it) covered it. The
// session takes both descriptors. It returns false, and takes nothing,
// once maxStaged entries are recorded.
func (s *Session) Staged(placeholder, content int, dir bool) bool {
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	if len(s.created.entries) >= maxStaged {
		return false
	}
	s.created.entries = append(s.created.entries, createdEntry{placeholder, content, dir})
	if dir {
		s.stagedDev(content)
		s.placeholder(placeholder)
	}
	return true
}

// Full reports whether no further entry can be staged.
func (s *Session) Full() bool {
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	return len(s.created.entries) >= maxStaged
}

// Refused records that the command was refused creating a protected entry
// at p, and why, once per path, for Finish's report.
func (s *Session) Refused(p, why string) {
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	if s.created.refused == nil {
		s.created.refused = map[string]bool{}
	}
	if len(s.created.refused) >= maxStaged || s.created.refused[p] {
		return
	}
	s.created.refused[p] = true
	s.notes = append(s.notes, fmt.Sprintf("%s: refused, %s", p, why))
}

// StagingTmpfs is the detached tmpfs staged content lives in, or -1.
func (s *Session) StagingTmpfs() int { return s.tmpfs }

// Created reports whether the command created a protected entry, which
// Land has to put on the host.
func (s *Session) Created() bool {
	if s == nil {
		return false
	}
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	return len(s.created.entries) > 0
}

// Land puts each staged entry's content into its placeholder on the host,
// the mount over it removed, for Finish to hold as any new entry. It needs
// CAP_SYS_ADMIN and a thread outside the command's Landlock domain: the
// staged content is in detached mounts.
//
// Preconditions: the command and everything it started are gone.
func (s *Session) Land() {
	if s == nil {
		return
	}
	s.created.mu.Lock()
	entries := s.created.entries
	s.created.entries = nil
	s.created.mu.Unlock()
	var paths, notes []string
	var heads []stagedHead
	for _, e := range entries {
		ph := "/proc/self/fd/" + strconv.Itoa(e.placeholder)
		where, err := os.Readlink(ph)
		if err == nil && path.IsAbs(where) {
			// The placeholder's path is where its mount is, in this
			// namespace: the host's file can be renamed only once it is
			// no mount point here.
			unix.Unmount(where, unix.MNT_DETACH)
		}
		if err != nil || strings.HasSuffix(where, " (deleted)") || !path.IsAbs(where) {
			notes = append(notes, fmt.Sprintf("%s: dropped, its placeholder was removed on the host or lies too deep to name", strings.TrimSuffix(where, " (deleted)")))
		} else if !e.dir && path.Base(where) == HeadName {
			if h, err := stagedHeadOf(where, e); err != nil {
				notes = append(notes, fmt.Sprintf("%s: dropped, %v", where, err))
			} else {
				heads = append(heads, h)
				unix.Close(e.content)
				continue // its placeholder is Finish's now
			}
		} else if err := land(e.placeholder, "/proc/self/fd/"+strconv.Itoa(e.content), e.dir); err != nil {
			notes = append(notes, fmt.Sprintf("%s: dropped, its staged content could not be copied (%v)", where, err))
		} else {
			paths = append(paths, where)
		}
		unix.Close(e.placeholder)
		unix.Close(e.content)
	}
	s.created.mu.Lock()
	s.created.landed, s.created.notes, s.created.heads = paths, notes, heads
	s.created.mu.Unlock()
}

// stagedHeadOf reads what the command wrote to the staged HEAD e.
func stagedHeadOf(where string, e createdEntry) (stagedHead, error) {
	f, err := os.Open("/proc/self/fd/" + strconv.Itoa(e.content))
	if err != nil {
		return stagedHead{}, fmt.Errorf("its staged content could not be read (%v)", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHead+1))
	if err != nil {
		return stagedHead{}, fmt.Errorf("its staged content could not be read (%v)", err)
	}
	if len(b) > maxHead {
		return stagedHead{}, errors.New("larger than any HEAD git reads")
	}
	return stagedHead{path: where, placeholder: e.placeholder, content: b}, nil
}

// land copies the staged content src into the placeholder ph: into it for
// a directory, in its place for a file.
func land(ph int, src string, dir bool) error {
	if dir {
		return os.CopyFS("/proc/self/fd/"+strconv.Itoa(ph), os.DirFS(src))
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return replacePlaceholder(ph, func(out *os.File) error {
		_, err := io.Copy(out, in)
		return err
	})
}

// replacePlaceholder puts a file written by write in place of the
// placeholder ph of a staged file, a socket node no one could open while
// the command ran: a file made beside it with its mode and renamed over
// it. The placeholder must still be at the path it has now.
func replacePlaceholder(ph int, write func(*os.File) error) error {
	where, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(ph))
	if err != nil {
		return err
	}
	if !path.IsAbs(where) || strings.HasSuffix(where, " (deleted)") {
		return errors.New("its placeholder was removed")
	}
	var pst unix.Stat_t
	if err := unix.Fstat(ph, &pst); err != nil {
		return err
	}
	dir, name := path.Dir(where), path.Base(where)
	dirfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Dev != pst.Dev || st.Ino != pst.Ino {
		return errors.New("its placeholder was replaced")
	}
	tmp := ".corral-land-" + name
	unix.Unlinkat(dirfd, tmp, 0)
	fd, err := unix.Openat(dirfd, tmp, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	out := os.NewFile(uintptr(fd), tmp)
	err = write(out)
	if err == nil {
		err = out.Chmod(os.FileMode(pst.Mode & 0o777))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, name)
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
	}
	return err
}

// closeCreated releases what landCreated did not.
func (s *Session) closeCreated() {
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	for _, e := range s.created.entries {
		unix.Close(e.placeholder)
		unix.Close(e.content)
	}
	s.created.entries = nil
	for _, h := range s.created.heads {
		unix.Close(h.placeholder)
	}
	s.created.heads = nil
}
