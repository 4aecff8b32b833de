package guard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/pathtree"
)

// Session is what Start set up for one command, for Finish.
type Session struct {
	// degraded says why nothing can be staged or held: git directories
	// are then read-only like the other entries.
	degraded error
	notes    []string
	roots    []root
	names    []string
	skip     []string
	stages   []stage
	seen     map[identity]bool
	// dirs are the directories the walk at the start read, by path
	// relative to their root (one map per root), for the walk at exit to
	// reuse; reuse is set on that walk.
	dirs  map[string]dirState
	reuse bool
	// known are the listings Prepare read, by path relative to the root,
	// for the walk at the start to take where a directory is unchanged.
	known map[string]dirState
	// anywhere are the names in force marked Anywhere, parts the
	// elements of every name in force (see MayProtect); buf is the
	// walk's getdents buffer.
	anywhere map[string]bool
	patterns []string // of anywhere: the suffixes of names that are patterns (*.code-workspace)
	parts    map[string]bool
	buf      []byte
	tmpfs    int // detached tmpfs holding the stages' upper layers, or -1
	// readOnly are the entries Start bound read-only onto themselves.
	readOnly []string
	// objects are the host's objects directories bound into stages (see
	// bindObjects).
	objects []string
	// created are the protected entries the command created (see Staged).
	created created
	// bare, when set, is called by walk for each bare repository found
	// (see bareRepo), which it does not descend into; inert for each HEAD
	// file git does not take, which a write could change (see headOf).
	bare  func(p string, st *unix.Stat_t)
	inert func(p string)
	// stagedDevs are the filesystems of staged content: each git
	// directory's overlay and each new protected directory's tmpfs (see
	// StagesHead). Under created.mu.
	stagedDevs map[uint64]bool
	// lazy: no walk; the creator asks Within of each call that writes
	// (see lazy_linux.go). linked are the targets of symlinks with a
	// protected name at the top of a root, protected like the entry.
	lazy bool
	tops []string // the names in force listed for the top of a root
	follower
	nstages int
	made    map[identity]bool // under created.mu
	// gitFiles are the .git files the command made unstaged, for Finish.
	gitFiles []string
	killed   bool // see Killed
	// notGit are directories Within found to be no git directory, by
	// path, until ForgetPlain: the listener's alone.
	notGit map[string]bool
	// worktrees are the tops of nested worktrees whose configuration
	// Within has read (see nestedWorktree): the listener's alone.
	worktrees map[string]bool
}

// root is a writable root and a private copy of its mount tree taken before
// anything was mounted on it: the host's files as they are, with no stage
// on top.
type root struct {
	path  string
	clone int
	dirs  map[string]dirState
	known map[string]dirState // what Prepare's walk read
}

// stage is a git directory mounted as overlayfs while the command runs.
type stage struct {
	path   string // the git directory
	host   int    // it, opened before the overlay covered it
	upper  string
	copied map[string]bool // see copyUnmapped
	// made: a git directory the command made (git init, git clone),
	// staged from the start; held rather than merged when the command
	// was killed, as the repository is then half made.
	made bool
}

// settled is how long ago a directory must have changed for the walk at
// exit to trust its ctime: longer than any filesystem's timestamp
// granularity.
var settled = 3 * time.Second

// dirState is a directory as a walk found it: subdirs to descend into, and
// names, the entries named as protected Anywhere by the walk's names.
type dirState struct {
	dev, ino uint64
	ctime    unix.Timespec
	subdirs  []string
	names    []string
	head     bool // it holds a file named HEAD: perhaps a bare repository
}

// unchanged reports whether st is the directory d describes, with the same
// entries: adding, removing or renaming an entry changes a directory's
// ctime, which no call can set back.
func (d dirState) unchanged(st *unix.Stat_t) bool {
	return d.dev == st.Dev && d.ino == st.Ino && d.ctime == st.Ctim
}

// identity tells whether an entry found at exit is the one there at start.
type identity struct {
	dev, ino uint64
	mode     uint32
}

func identityOf(st *unix.Stat_t) identity {
	return identity{dev: st.Dev, ino: st.Ino, mode: st.Mode & unix.S_IFMT}
}

// Prepare runs while the sandbox is built, in its mount namespace, with
// CAP_SYS_ADMIN there and before new mount namespaces are forbidden (a
// detached mount is one): it keeps, for each writable root that is a
// directory, a private clone of the root's mounts as they are before any
// stage covers them, and makes the tmpfs the stages' upper layers go to,
// mounted nowhere.
//
// lazy asks for a session that looks only at what the command touches
// (see Lazy): the creator performs every call that writes in a root. When
// it cannot stage, the session walks as without.
//
// size bounds what all staging holds together (the stages' upper layers,
// new protected entries), as the /tmp limit bounds /tmp; zero leaves the
// kernel's default, half of the host's memory.
func Prepare(roots []string, lazy bool, size int64) (*Session, error) {
	ownIDMaps() // for Start's staging, ahead
	s := &Session{seen: map[identity]bool{}, tmpfs: -1}
	roots = slices.Clone(roots)
	slices.SortFunc(roots, func(a, b string) int { return len(b) - len(a) }) // deepest first
	for _, r := range roots {
		fi, err := os.Stat(r)
		if err != nil || !fi.IsDir() {
			continue // a writable file holds nothing
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, r, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			fd = -1
			s.degraded = fmt.Errorf("clone %s: %w", r, err)
		}
		s.roots = append(s.roots, root{path: r, clone: fd})
	}
	if s.degraded == nil {
		s.degraded = s.makeTmpfs(size)
	}
	if lazy && s.degraded == nil {
		s.lazy = true
		return s, nil
	}
	// Read the roots now, while the sandbox is built (ahead of the
	// command, for a library's sandboxes built ahead), with every name
	// protected: the walk when the command starts then reads again only
	// the directories changed since.
	var paths []string
	for _, r := range s.roots {
		paths = append(paths, r.path)
	}
	for i, r := range s.roots {
		w := &Session{names: Names(), dirs: map[string]dirState{}}
		w.walk(r.path, r.path, paths, func(string, *unix.Stat_t) {})
		s.roots[i].known = w.dirs
	}
	return s, nil
}

// Start runs when a command starts, before the command exists, with
// CAP_SYS_ADMIN in the sandbox's namespaces. It walks each writable root,
// stages every git directory found on an overlay and binds every other
// protected entry that exists read-only. names are the protected names in
// force (List minus what the configuration allows); skip are read-only and
// hidden paths, which need no guard.
func (s *Session) Start(names, skip []string) error {
	s.tops, s.parts = nil, nil
	if s.lazy {
		s.startLazy(names, skip)
		return nil
	}
	s.names, s.skip = names, skip
	var roots []string
	for _, r := range s.roots {
		roots = append(roots, r.path)
	}
	var gitdirs []string
	var readOnly []string
	// An embedded bare repository is staged like a .git directory.
	s.bare = func(p string, st *unix.Stat_t) {
		s.seen[identityOf(st)] = true
		gitdirs = append(gitdirs, p)
		if c := commondirOf(p); c != "" && inRoots(c, roots) {
			gitdirs = append(gitdirs, c)
		}
	}
	// A HEAD git does not take is read-only: rewritten, it would make its
	// directory a repository.
	if s.gitInForce() {
		s.inert = func(p string) { readOnly = append(readOnly, p) }
	}
	defer func() { s.bare, s.inert = nil, nil }()
	for i, r := range roots {
		s.dirs = map[string]dirState{}
		s.known = s.roots[i].known
		s.walk(r, r, roots, func(p string, st *unix.Stat_t) {
			s.seen[identityOf(st)] = true
			switch {
			case path.Base(p) != GitDir:
				readOnly = append(readOnly, s.resolveLink(p, st, roots)...)
			case st.Mode&unix.S_IFMT == unix.S_IFDIR:
				gitdirs = append(gitdirs, p)
			default:
				// A .git file or link names a git directory elsewhere:
				// staged if it lies in a writable root, read-only
				// otherwise as all of the host is.
				if t := gitdirOf(p, st); t != "" && inRoots(t, roots) {
					gitdirs = append(gitdirs, t)
					if c := commondirOf(t); c != "" && inRoots(c, roots) {
						gitdirs = append(gitdirs, c)
					}
				}
				if st.Mode&unix.S_IFMT == unix.S_IFREG {
					readOnly = append(readOnly, p)
				}
			}
		})
		s.roots[i].dirs = s.dirs
	}
	s.known = nil
	if s.degraded != nil {
		// Without a clone and a tmpfs there is no staging: git
		// directories are read-only, and commits fail rather than land
		// unchecked.
		for _, d := range gitdirs {
			s.notes = append(s.notes, fmt.Sprintf("%s: read-only, not staged (%v)", d, s.degraded))
		}
		readOnly = append(readOnly, gitdirs...)
	} else if err := s.stageAll(gitdirs); err != nil {
		return err
	}
	for _, p := range readOnly {
		if err := bindReadOnly(p); err != nil {
			return fmt.Errorf("protect %s: %w", p, err)
		}
		s.readOnly = append(s.readOnly, p)
	}
	return nil
}

// ReadOnly returns the protected entries Start bound read-only onto
// themselves, for the watch that puts a mount back when the host replaces
// its path.
func (s *Session) ReadOnly() []string {
	if s == nil {
		return nil
	}
	return s.readOnly
}

// resolveLink returns p, or for a symlink the directory or file it names
// when that lies in a writable root: the link itself cannot be bound.
func (s *Session) resolveLink(p string, st *unix.Stat_t, roots []string) []string {
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return []string{p}
	}
	t, err := filepath.EvalSymlinks(p)
	if err != nil || !inRoots(t, roots) {
		return nil
	}
	return []string{t}
}

// walk calls fn for each protected entry under dir, a directory inside
// root: names marked Anywhere at every depth, the others at the top only.
// It does not descend into git directories, symlinks, other writable
// roots or skipped paths.
func (s *Session) walk(root, dir string, roots []string, fn func(string, *unix.Stat_t)) {
	top := dir == root
	if top {
		for _, n := range s.names {
			if e, ok := Lookup(n); ok && !e.Anywhere {
				var st unix.Stat_t
				if unix.Lstat(path.Join(root, n), &st) == nil {
					fn(path.Join(root, n), &st)
				}
			}
		}
	}
	// A directory whose inode and ctime are those of the start has the
	// same entries (adding, removing or renaming one changes its ctime,
	// which no call can set back): only its subdirectories need a visit.
	rel := strings.TrimPrefix(dir, root)
	var st unix.Stat_t
	if unix.Lstat(dir, &st) != nil {
		return
	}
	if d, ok := s.dirs[rel]; ok && s.reuse && d.unchanged(&st) {
		if d.head && s.bareAt(dir, &st, top) {
			return
		}
		for _, sub := range d.subdirs {
			s.walk(root, join(dir, sub), roots, fn)
		}
		return
	}
	var names, subdirs []string
	var head bool
	if d, ok := s.known[rel]; ok && d.unchanged(&st) {
		names, subdirs = s.inForce(dir, top, d)
		head = d.head
	} else if names, subdirs, head, ok = s.list(dir, top); !ok {
		return
	}
	if head && s.bareAt(dir, &st, top) {
		if !s.reuse && s.dirs != nil && time.Since(time.Unix(st.Ctim.Unix())) > settled {
			s.dirs[rel] = dirState{dev: st.Dev, ino: st.Ino, ctime: st.Ctim, head: true}
		}
		return
	}
	found := slices.Clone(names)
	for _, n := range names {
		p := join(dir, n)
		if s.skipped(root, p) {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil {
			fn(p, &st)
		}
	}
	kept := subdirs[:0]
	for _, n := range subdirs {
		p := join(dir, n)
		if slices.Contains(roots, p) || s.skipped(root, p) {
			continue
		}
		kept = append(kept, n)
		s.walk(root, p, roots, fn)
	}
	subdirs = kept
	// A change within the timestamp granularity of the walk could keep
	// the ctime: only directories changed well before are reused.
	if !s.reuse && s.dirs != nil && time.Since(time.Unix(st.Ctim.Unix())) > settled {
		s.dirs[rel] = dirState{dev: st.Dev, ino: st.Ino, ctime: st.Ctim, subdirs: subdirs, names: found, head: head}
	}
}

// skipped reports whether p, inside the writable root, lies in a read-only
// or hidden path of that root. One above the root does not count: the
// root is mounted writable over it, so what lies in the root is writable
// and must be protected.
func (s *Session) skipped(root, p string) bool {
	return slices.ContainsFunc(s.skip, func(k string) bool { return pathtree.Within(k, root) && pathtree.Within(p, k) })
}

// list reads dir's entries straight from getdents, using the type each
// entry carries rather than a stat of it (an lstat only where the
// filesystem gives no type): the protected names marked Anywhere that are
// in force, and the subdirectories to descend into (not git directories,
// and not HeldDir at the top of a root). A workspace holds far more plain
// files than anything else, and those cost no allocation.
func (s *Session) list(dir string, top bool) (names, subdirs []string, head, ok bool) {
	// The top may be reached through a link (the view at exit is
	// /proc/self/fd/N); below it, a directory replaced by a link since
	// its parent was read is not followed.
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !top {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(dir, flags, 0)
	if err != nil {
		return nil, nil, false, false
	}
	defer unix.Close(fd)
	s.anywhereInForce()
	if s.buf == nil {
		s.buf = make([]byte, 32<<10)
	}
	for {
		n, err := unix.Getdents(fd, s.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, nil, false, false
		}
		if n <= 0 {
			return names, subdirs, head, true
		}
		for b := s.buf[:n]; len(b) >= direntName; {
			reclen := int(binary.NativeEndian.Uint16(b[direntReclen:]))
			if reclen < direntName || reclen > len(b) {
				return nil, nil, false, false
			}
			name := b[direntName:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			typ := b[direntType]
			b = b[reclen:]
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			if _, ok := s.anywhereName(string(name)); ok {
				names = append(names, string(name))
				continue
			}
			if string(name) == "HEAD" {
				head = true
			}
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				if unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue
				}
				if st.Mode&unix.S_IFMT == unix.S_IFDIR {
					typ = unix.DT_DIR
				}
			}
			if typ == unix.DT_DIR && string(name) != GitDir && (!top || string(name) != HeldDir) {
				subdirs = append(subdirs, string(name))
			}
		}
	}
}

// inForce turns the listing Prepare's walk, with every name protected,
// kept of an unchanged directory into what list would return under the
// names in force: an entry whose name is not in force is an ordinary one,
// descended into when it is a directory.
func (s *Session) inForce(dir string, top bool, d dirState) (names, subdirs []string) {
	s.anywhereInForce()
	subdirs = slices.Clone(d.subdirs)
	for _, n := range d.names {
		if _, ok := s.anywhereName(n); ok {
			names = append(names, n)
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(join(dir, n), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
			n != GitDir && (!top || n != HeldDir) {
			subdirs = append(subdirs, n)
		}
	}
	return names, subdirs
}

func (s *Session) anywhereInForce() {
	if s.anywhere == nil {
		s.anywhere = map[string]bool{}
		for _, n := range s.names {
			if e, ok := Lookup(n); !ok || e.Anywhere { // a name of the user's own: at every depth
				s.anywhere[n] = true
				if suffix, ok := strings.CutPrefix(n, "*"); ok {
					s.patterns = append(s.patterns, suffix)
				}
			}
		}
	}
}

// anywhereName returns the name in force for every depth that name is, or
// whose pattern it matches (*.code-workspace).
func (s *Session) anywhereName(name string) (string, bool) {
	s.anywhereInForce()
	if s.anywhere[name] {
		return name, true
	}
	for _, p := range s.patterns {
		if len(name) > len(p) && strings.HasSuffix(name, p) {
			return "*" + p, true
		}
	}
	return "", false
}

// join is path.Join for a clean dir and a plain name, without cleaning.
func join(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// The layout of struct linux_dirent64: d_ino, d_off, d_reclen, d_type,
// then the name, NUL-terminated.
const (
	direntReclen = int(unsafe.Offsetof(unix.Dirent{}.Reclen))
	direntType   = int(unsafe.Offsetof(unix.Dirent{}.Type))
	direntName   = int(unsafe.Offsetof(unix.Dirent{}.Name))
)

// gitdirOf returns the git directory a .git file or link names, resolved.
func gitdirOf(p string, st *unix.Stat_t) string {
	var t string
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		t = p
	case unix.S_IFREG:
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return ""
		}
		t = strings.TrimSpace(v)
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
	default:
		return ""
	}
	r, err := filepath.EvalSymlinks(t)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
		return ""
	}
	return r
}

// stageAll mounts an overlay on each git directory, outermost first; one
// inside another is covered by the outer one's stage already.
func (s *Session) stageAll(dirs []string) error {
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	var outer []string
	for _, d := range dirs {
		if !slices.ContainsFunc(outer, func(o string) bool { return pathtree.Within(d, o) }) {
			outer = append(outer, d)
		}
	}
	if len(outer) == 0 {
		return nil
	}
	if s.tmpfs < 0 {
		return errors.New("no staging tmpfs")
	}
	for _, d := range outer {
		host, err := unix.Open(d, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("stage %s: %w", d, err)
		}
		// Numbered for the session: a lazy one stages one at a time.
		n := strconv.Itoa(s.nstages)
		s.nstages++
		for _, sub := range []string{n, n + "/u", n + "/w"} {
			if err := unix.Mkdirat(s.tmpfs, sub, 0o700); err != nil {
				unix.Close(host)
				return fmt.Errorf("stage %s: %w", d, err)
			}
		}
		var copied map[string]bool
		if up, err := unix.Openat(s.tmpfs, n+"/u", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			copied = copyUnmapped(host, up)
			unix.Close(up)
		}
		base := fmt.Sprintf("/proc/self/fd/%d/%s/", s.tmpfs, n)
		opts := "lowerdir=" + escapeOverlay(d) + ",upperdir=" + base + "u,workdir=" + base + "w,userxattr"
		if err := unix.Mount("overlay", d, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			// An overlay this kernel refuses (no user xattrs on tmpfs
			// before 6.6, say): the directory is read-only instead.
			unix.Close(host)
			if err := bindReadOnly(d); err != nil {
				return fmt.Errorf("protect %s: %w", d, err)
			}
			s.notes = append(s.notes, fmt.Sprintf("%s: read-only, not staged (overlayfs: %v)", d, err))
			continue
		}
		s.created.mu.Lock()
		s.stages = append(s.stages, stage{path: d, host: host, upper: base + "u", copied: copied})
		if fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			s.stagedDev(fd)
			unix.Close(fd)
		}
		s.created.mu.Unlock()
		s.bindObjects(d, host)
	}
	return nil
}

// makeTmpfs makes the detached tmpfs the stages' upper layers go to.
func (s *Session) makeTmpfs(size int64) error {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("staging tmpfs: %w", err)
	}
	defer unix.Close(fsfd)
	if err := unix.FsconfigSetString(fsfd, "mode", "0700"); err != nil {
		return fmt.Errorf("staging tmpfs: %w", err)
	}
	if size > 0 {
		if err := unix.FsconfigSetString(fsfd, "size", strconv.FormatInt(size, 10)); err != nil {
			return fmt.Errorf("staging tmpfs: %w", err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return fmt.Errorf("staging tmpfs: %w", err)
	}
	fd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return fmt.Errorf("staging tmpfs: %w", err)
	}
	s.tmpfs = fd
	// Staged files are clones of this tmpfs's files, of its device.
	s.stagedDev(fd)
	return nil
}

var escapeOverlay = strings.NewReplacer(`\`, `\\`, `,`, `\,`, `:`, `\:`).Replace

func bindReadOnly(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	return unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, attr)
}

// Reachable returns what the init must still reach once Landlock confines
// it: the staging tmpfs and the roots' clones are detached mounts, which
// no rule on a path reaches. Only the init holds them.
func (s *Session) Reachable() []string {
	if s == nil {
		return nil
	}
	var out []string
	if s.tmpfs >= 0 {
		out = append(out, fmt.Sprintf("/proc/self/fd/%d", s.tmpfs))
	}
	for _, r := range s.roots {
		if r.clone >= 0 {
			out = append(out, fmt.Sprintf("/proc/self/fd/%d", r.clone))
		}
	}
	return out
}

// Finish runs once the command and everything it started are gone. It
// merges each stage into the host's git directory, then moves protected
// entries that are new or were replaced since Start into HeldDir (a new
// git directory is merged into a fresh one first, so that a repository
// made inside stays usable). It returns what was not merged, one line
// each.
func (s *Session) Finish() []string {
	if s == nil {
		return nil
	}
	s.created.mu.Lock()
	out := s.notes
	s.created.mu.Unlock()
	if s.degraded != nil {
		return out
	}
	var roots []string
	for _, r := range s.roots {
		roots = append(roots, r.path)
	}
	s.created.mu.Lock()
	landed := append(slices.Clone(s.created.landed), s.gitFiles...)
	out = append(out, s.created.notes...)
	s.created.mu.Unlock()
	// The walks below read the roots but no git directory, which is all
	// the merges write: they go on meanwhile, and nothing is held before
	// the merges are done.
	merged := make(chan []string, 1)
	var halfMade []string
	for _, st := range s.stages {
		if st.made && s.killed {
			halfMade = append(halfMade, st.path)
		}
	}
	go func() {
		var dropped []string
		for _, st := range s.stages {
			if st.made && s.killed {
				continue
			}
			dropped = append(dropped, Merge(st.upper, fmt.Sprintf("/proc/self/fd/%d", st.host), st.path, roots, st.copied)...)
		}
		merged <- dropped
	}()
	founds := make([][]string, len(s.roots))
	for i, r := range s.roots {
		if s.lazy {
			// Every protected entry made or replaced was made by the
			// creator, staged, and landed.
			founds[i] = s.landedIn(r, landed)
			continue
		}
		founds[i] = s.walkAtExit(r, roots, landed)
	}
	out = append(out, <-merged...)
	stamp := time.Now().UTC().Format("20060102T150405.000000000")
	for i, r := range s.roots {
		view := fmt.Sprintf("/proc/self/fd/%d", r.clone)
		h := &holder{root: r.path, view: view, stamp: stamp, roots: roots}
		for _, p := range halfMade {
			if s.rootOf(p) != r.path {
				continue
			}
			held, err := h.move(relOf(r.path, p))
			if err != nil {
				out = append(out, fmt.Sprintf("%s: a repository the command was making when it was killed, left as it is (%v)", p, err))
				continue
			}
			out = append(out, fmt.Sprintf("%s: a repository the command was making when it was killed, moved to %s", p, held))
		}
		// A repository made inside, its HEAD landed, before a .git file
		// of a worktree of it is looked at.
		out = append(out, s.landHeads(h, founds[i])...)
		for _, rel := range founds[i] {
			out = append(out, h.hold(rel)...)
		}
		if h.dir != "" { // left empty when all of a new repository landed
			os.Remove(view + "/" + h.dir)
			os.Remove(view + "/" + HeldDir)
		}
	}
	return out
}

// walkAtExit returns the protected entries of root r that are new or were
// replaced since Start, and those the command created there (landed), by
// path relative to it.
func (s *Session) walkAtExit(r root, roots, landed []string) []string {
	view := fmt.Sprintf("/proc/self/fd/%d", r.clone)
	var found []string
	viewSkip := make([]string, 0, len(s.skip))
	for _, k := range s.skip {
		if pathtree.Within(k, r.path) {
			viewSkip = append(viewSkip, view+strings.TrimPrefix(k, r.path))
		}
	}
	var viewRoots []string
	for _, o := range roots {
		if o != r.path && pathtree.Within(o, r.path) {
			viewRoots = append(viewRoots, view+strings.TrimPrefix(o, r.path))
		}
	}
	w := &Session{names: s.names, skip: viewSkip, dirs: r.dirs, reuse: true}
	isNew := func(p string, st *unix.Stat_t) {
		if !s.seen[identityOf(st)] {
			found = append(found, strings.TrimPrefix(p, view+"/"))
		}
	}
	// A bare repository made by the command is held and rebuilt like a
	// new .git directory.
	w.bare = isNew
	w.walk(view, view, viewRoots, isNew)
	for _, p := range landed {
		if s.rootOf(p) == r.path {
			if rel := relOf(r.path, p); rel != "." && !slices.Contains(found, rel) {
				found = append(found, rel)
			}
		}
	}
	return found
}

// Killed records that the command was killed (by a signal) rather than
// exiting: Finish holds the repositories it was making, half made.
func (s *Session) Killed(killed bool) {
	if s != nil {
		s.killed = killed
	}
}

// landedIn returns the entries of landed in root r, relative to it.
func (s *Session) landedIn(r root, landed []string) []string {
	var found []string
	for _, p := range landed {
		if s.rootOf(p) == r.path {
			if rel := relOf(r.path, p); rel != "." && !slices.Contains(found, rel) {
				found = append(found, rel)
			}
		}
	}
	return found
}

// Close releases what Start holds.
func (s *Session) Close() {
	if s == nil {
		return
	}
	s.closeCreated()
	for _, r := range s.roots {
		if r.clone >= 0 {
			unix.Close(r.clone)
		}
	}
	for _, st := range s.stages {
		unix.Close(st.host)
	}
	if s.tmpfs >= 0 {
		unix.Close(s.tmpfs)
	}
	s.roots, s.stages, s.tmpfs = nil, nil, -1
}

// holder moves entries of one writable root into its HeldDir.
type holder struct {
	root, view, stamp string
	roots             []string
	dir               string // made on first use
	// repo, when set, has the next hold take its directory for a new
	// repository; fill, when set, runs once it has moved the entry, before
	// anything is rebuilt from it (see landHeads).
	repo bool
	fill func() error
}

// hold deals with rel, a protected entry that is new or replaced: a .git
// file made by `git worktree add` for a worktree of a staged repository
// stays; a new git directory is held and merged into a fresh one; anything
// else is held.
func (h *holder) hold(rel string) []string {
	src := h.view + "/" + rel
	shown := path.Join(h.root, rel)
	var st unix.Stat_t
	if unix.Lstat(src, &st) != nil {
		return nil
	}
	isGit := path.Base(rel) == GitDir || st.Mode&unix.S_IFMT == unix.S_IFDIR && (h.repo || bareRepo(src))
	if isGit && st.Mode&unix.S_IFMT == unix.S_IFREG && h.linkedWorktree(src, shown) {
		return nil
	}
	held, err := h.move(rel)
	if err != nil {
		os.RemoveAll(src)
		return []string{fmt.Sprintf("%s: removed, it is new or replaced (%v)", shown, err)}
	}
	out := []string{fmt.Sprintf("%s: new or replaced, moved to %s", shown, held)}
	if h.fill != nil {
		if err := h.fill(); err != nil {
			out = append(out, fmt.Sprintf("%s: not filled in %s (%v)", shown, held, err))
		}
	}
	if isGit && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := os.Mkdir(src, 0o755); err != nil {
			return append(out, fmt.Sprintf("%s: not recreated (%v)", shown, err))
		}
		heldView := h.view + strings.TrimPrefix(held, h.root)
		merged := Merge(heldView, src, shown, h.roots, nil)
		if len(merged) == 0 {
			os.RemoveAll(heldView) // all of it landed
			return nil
		}
		out = []string{fmt.Sprintf("%s: new repository, kept what is allowed; the original is in %s", shown, held)}
		out = append(out, merged...)
	}
	return out
}

// linkedWorktree reports whether the .git file at src names a worktree of
// a repository in a writable root whose gitdir names this file back.
func (h *holder) linkedWorktree(src, shown string) bool {
	b, err := os.ReadFile(src)
	if err != nil {
		return false
	}
	t, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || !filepath.IsAbs(t) || path.Clean(t) != t || path.Base(path.Dir(t)) != "worktrees" {
		return false
	}
	if !inRoots(t, h.roots) {
		return false
	}
	back, err := os.ReadFile(path.Join(t, "gitdir"))
	if err != nil || strings.TrimSpace(string(back)) != shown {
		return false
	}
	fi, err := os.Lstat(path.Join(path.Dir(path.Dir(t)), "HEAD"))
	return err == nil && fi.Mode().IsRegular()
}

func (h *holder) move(rel string) (string, error) {
	if h.dir == "" {
		d := path.Join(HeldDir, h.stamp)
		if err := os.MkdirAll(h.view+"/"+d, 0o700); err != nil {
			return "", err
		}
		h.dir = d
	}
	name := "held-" + strings.ReplaceAll(strings.ReplaceAll(rel, "%", "%25"), "/", "%2F")
	dst := path.Join(h.dir, name)
	if err := os.Rename(h.view+"/"+rel, h.view+"/"+dst); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) && errors.Is(le.Err, syscall.EXDEV) {
			return "", errors.New("on another filesystem")
		}
		return "", err
	}
	return path.Join(h.root, dst), nil
}

var _ fs.FileInfo // keep io/fs for callers of Merge
