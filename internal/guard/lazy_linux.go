package guard

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/pathtree"
)

// A lazy session looks at what the command touches, not at the whole of
// each writable root: the creator, which performs every call that could
// write a name or an existing file there (seccomp.GuardCalls), asks Within
// of the directory each call acts in. A git directory is staged when the
// command first writes into it, and an entry the host had under a
// protected name is refused to it, as the read-only bind of a walk at the
// start did. So a command costs the same on an empty workspace and on one
// of a million files, and an entry no call writes costs nothing.
//
// What a lazy session gives up against a walk is named in docs/layers.md
// ("What a command touches"): a symlink with a protected name below the
// top of a root, whose target the walk bound read-only, protects nothing
// now.

// Kind is what holds a directory a command writes in.
type Kind int

const (
	// Plain: nothing of the guard's; the call goes on as the command
	// asked.
	Plain Kind = iota
	// Staged: content already staged (a git directory staged earlier, a
	// protected entry the command made): the call goes on there.
	Staged
	// InEntry: a protected entry the host had, which no call of the
	// command may change.
	InEntry
	// Git: a git directory not yet staged, which StageGit stages before
	// the call goes on in it.
	Git
)

// Lazy reports whether s looks only at what the command touches: there is
// no walk at the start or at exit, and the creator must ask Within of
// every call that writes.
func (s *Session) Lazy() bool { return s != nil && s.lazy && s.Stages() }

// startLazy is Start for a lazy session. Of the roots it looks only at
// what the host's programs follow out of a protected entry at the top of
// each, whose target, when it lies in a writable root, is then protected
// like the entry (linked): a symlink with a protected name
// (.vscode -> tools/vscode), a symlink inside a protected directory
// (.claude/settings.json -> ../shared/claude.json), a hook that is a
// symlink (.git/hooks/pre-commit -> ../../scripts/pre-commit, as husky and
// pre-commit install them) and the hooks directory the repository's
// core.hooksPath names, and the scripts and included files its config
// makes git run or read (see ConfigRuns). Each is a handful of entries, not
// the project.
func (s *Session) startLazy(names, skip []string) {
	s.names, s.skip = names, skip
	s.ignored = s.skipped
	s.notGit = map[string]bool{}
	s.anywhereInForce()
	s.topsInForce()
	var roots []string
	for _, r := range s.roots {
		roots = append(roots, r.path)
	}
	for _, r := range roots {
		for _, n := range names {
			s.linkTargets(r, path.Join(r, n), roots, n == GitDir)
		}
		if s.gitInForce() {
			s.hooksOf(r, roots)
		}
	}
}

// maxWorktrees bounds the nested worktrees Within reads the configuration
// of in one command.
const maxWorktrees = 1 << 12

// nestedWorktree reads, the first time a call writes below at, a
// directory below the top of a writable root, what git runs from at when
// it is a worktree's top (it has a .git): what hooksOf records for the
// worktree at the top of each root at the start. A call writing anywhere
// in a nested worktree passes through its top first, so what git runs
// from inside it is protected before the first write there. It reports
// whether it protected anything new.
func (s *Session) nestedWorktree(at string) bool {
	if s.worktrees == nil {
		s.worktrees = map[string]bool{}
	}
	if s.worktrees[at] || len(s.worktrees) >= maxWorktrees {
		return false
	}
	s.worktrees[at] = true
	var st unix.Stat_t
	if unix.Lstat(join(at, GitDir), &st) != nil {
		return false
	}
	var roots []string
	for _, r := range s.roots {
		roots = append(roots, r.path)
	}
	n := len(s.linked)
	s.hooksOf(at, roots)
	return len(s.linked) > n
}

// Within tells what holds dir, a directory a command's call writes in (an
// absolute clean path as the sandbox shows it), and where: the protected
// entry or git directory it lies in. dev is dir's device: staged content
// lies on a file system of its own. A dir of "" (too deep to name) holds
// nothing the guard can tell, and fails closed as InEntry.
func (s *Session) Within(dir string, dev uint64) (Kind, string) {
	if s.isStagedDev(dev) {
		return Staged, ""
	}
	if dir == "" {
		return InEntry, ""
	}
	if s.InObjects(dir) {
		return Staged, "" // a staged repository's objects, shown as the host's
	}
	root := s.rootOf(dir)
	if root == "" || s.skipped(root, dir) {
		return Plain, ""
	}
	rel := relOf(root, dir)
	if rel == "." {
		rel = ""
	}
	// Outermost first: a .git in a .vscode is the .vscode's.
	for _, n := range s.topsInForce() {
		if rel == n || strings.HasPrefix(rel, n+"/") {
			return InEntry, path.Join(root, n)
		}
	}
	for _, t := range s.linked {
		if pathtree.Within(dir, t) {
			return InEntry, t
		}
	}
	if _, e, exact, _, in := s.topInHome(dir); exact || in {
		return InEntry, e
	}
	// The root itself is never staged: New refuses a root git takes for
	// a repository, and a HEAD the command makes there is staged alone.
	git := s.gitInForce()
	at := root
	for part := range strings.SplitSeq(rel, "/") {
		if part == "" {
			break
		}
		at = join(at, part)
		if _, ok := s.anywhereName(part); ok {
			if part == GitDir {
				return Git, at
			}
			return InEntry, at
		}
		if git && !s.notGit[at] {
			if s.headAt(at) {
				return Git, at
			}
			if s.nestedWorktree(at) {
				for _, t := range s.linked {
					if pathtree.Within(dir, t) {
						return InEntry, t
					}
				}
			}
			if len(s.notGit) >= maxNotGit {
				clear(s.notGit)
			}
			s.notGit[at] = true
		}
	}
	return Plain, ""
}

// maxNotGit bounds the directories Within remembers are no git directory.
const maxNotGit = 1 << 16

// ForgetPlain drops what Within remembers of directories that are no git
// directory: after a rename, an rmdir or a new refs/ or objects/ (see the
// creator's forgetPlain).
func (s *Session) ForgetPlain() { clear(s.notGit) }

// headAt reports whether git may take dir, a directory in a writable root,
// for a git directory: by its HEAD (see headOf), or as the common
// directory another's commondir names, which git takes by its objects and
// refs alone. A HEAD the command made is staged and never one the host
// sees: its directory is left to the exit, which holds it.
func (s *Session) headAt(dir string) bool {
	var st unix.Stat_t
	if unix.Lstat(join(dir, HeadName), &st) == nil {
		if s.isStagedDev(st.Dev) {
			return false
		}
		if headOf(dir) == repoHead {
			return true
		}
	}
	if !isDir(join(dir, "refs")) || !isDir(join(dir, "objects")) {
		return false
	}
	// One the command made is no host's common directory: a commondir
	// naming it was written by the command, inside staged content.
	if unix.Lstat(dir, &st) != nil {
		return true
	}
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	return !s.made[identityOf(&st)]
}

// Made records a directory the command made (open), by its inode, which a
// rename keeps.
func (s *Session) Made(fd int) {
	var st unix.Stat_t
	if !s.Lazy() || unix.Fstat(fd, &st) != nil {
		return
	}
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	if s.made == nil {
		s.made = map[identity]bool{}
	}
	s.made[identityOf(&st)] = true
}

func isDir(p string) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// IsStaged reports whether dev is a file system of staged content.
func (s *Session) IsStaged(dev uint64) bool { return s.isStagedDev(dev) }

// isStagedDev reports whether dev is a file system of staged content.
func (s *Session) isStagedDev(dev uint64) bool {
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	return s.stagedDevs[dev]
}

// StagedFile reports whether fd, a file the command is to write, is staged
// content rather than the host's.
func (s *Session) StagedFile(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && s.isStagedDev(st.Dev)
}

// StageGit stages the git directory d (Within's answer) for a command
// writing into it, as Start stages every one on a walk: an overlay whose
// upper layer the host cannot see, merged through the allowlist at exit.
// Its commondir is staged too when it lies in a writable root. It needs
// CAP_SYS_ADMIN in the sandbox's namespaces, which mount raises around
// the mounts.
//
// made says the command made d, empty, a moment ago (see the creator's
// newGitDir).
func (s *Session) StageGit(d string, made bool, mount func(func() error) error) error {
	var roots []string
	for _, r := range s.roots {
		roots = append(roots, r.path)
	}
	dirs := []string{d}
	if c := commondirOf(d); c != "" && inRoots(c, roots) {
		dirs = append(dirs, c)
	}
	s.created.mu.Lock()
	staged := slices.Clone(s.stages)
	s.created.mu.Unlock()
	var todo []string
	for _, g := range dirs {
		if !slices.ContainsFunc(staged, func(st stage) bool { return pathtree.Within(g, st.path) }) {
			todo = append(todo, g)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if err := mount(func() error { return s.stageAll(todo) }); err != nil {
		return err
	}
	if made {
		s.created.mu.Lock()
		for i := range s.stages {
			if s.stages[i].path == d {
				s.stages[i].made = true
			}
		}
		s.created.mu.Unlock()
	}
	return nil
}

// Stage reports the git directory staged for dir, if any: after StageGit,
// the creator opens dir again through it.
func (s *Session) Stage(dir string) (string, bool) {
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	for _, st := range s.stages {
		if pathtree.Within(dir, st.path) {
			return st.path, true
		}
	}
	return "", false
}

func (s *Session) describe(k Kind, at string) string {
	switch k {
	case InEntry:
		return fmt.Sprintf("inside the protected entry %s", at)
	case Git:
		return fmt.Sprintf("inside the git directory %s", at)
	}
	return ""
}

// MadeGitFile records a .git file the command made on the host, unstaged
// (see the creator's gitFile): the command may write it again, and Finish
// deals with it as with any new protected entry.
func (s *Session) MadeGitFile(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return
	}
	p := dirPathOf(fd)
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	if s.made == nil {
		s.made = map[identity]bool{}
	}
	s.made[identityOf(&st)] = true
	if p != "" {
		s.gitFiles = append(s.gitFiles, p)
	}
}

// MadeFile reports whether fd is a file the command made unstaged under a
// protected name (MadeGitFile).
func (s *Session) MadeFile(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	return s.made[identityOf(&st)]
}

// dirPathOf is where fd is, as the sandbox shows it, or "".
func dirPathOf(fd int) string {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !path.IsAbs(p) || strings.HasSuffix(p, " (deleted)") {
		return ""
	}
	return p
}

// Unstage removes, for a command's rmdir of name in dirfd, a directory the
// guard mounted there: a protected directory the command made (its tmpfs
// and the host's empty placeholder), a staged repository's objects (the
// host's, bound there: the stage's own is removed beneath) or a staged git
// directory (the overlay, then the host's directory, which the command has
// emptied in the stage: it is renamed aside first, so the host never holds
// it half removed). ok is false, and nothing done, for any other
// directory; errno is the call's answer. A directory that is not empty
// fails with ENOTEMPTY, as rmdir does. mount runs f with the capabilities
// to unmount.
func (s *Session) Unstage(dirfd int, name string, mount func(func() error) error) (errno syscall.Errno, ok bool) {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, false
	}
	id := identityOf(&st)
	s.created.mu.Lock()
	entry, stg, obj := -1, -1, -1
	for i, e := range s.created.entries {
		var est unix.Stat_t
		if e.dir && unix.Fstat(e.content, &est) == nil && identityOf(&est) == id {
			entry = i
		}
	}
	for i, g := range s.stages {
		var gst unix.Stat_t
		if unix.Stat(g.path, &gst) == nil && identityOf(&gst) == id {
			stg = i
		}
	}
	s.created.mu.Unlock()
	for i, o := range s.objects {
		var ost unix.Stat_t
		if unix.Stat(o, &ost) == nil && identityOf(&ost) == id {
			obj = i
		}
	}
	if entry < 0 && stg < 0 && obj < 0 {
		return 0, false
	}
	if errno := emptyDir(dirfd, name); errno != 0 {
		return errno, true
	}
	switch {
	case entry >= 0:
		return s.unstageEntry(dirfd, name, entry, mount), true
	case obj >= 0:
		o := s.objects[obj]
		if err := mount(func() error { return unix.Unmount(o, unix.MNT_DETACH) }); err != nil {
			return unix.EBUSY, true
		}
		s.objects = slices.Delete(s.objects, obj, obj+1)
		return errnoOf(unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)), true
	}
	return s.unstageGit(dirfd, name, stg, mount), true
}

// unstageEntry removes the protected directory the command made at name,
// entry of the created ones, empty: its tmpfs, then the host's placeholder.
func (s *Session) unstageEntry(dirfd int, name string, entry int, mount func(func() error) error) syscall.Errno {
	s.created.mu.Lock()
	e := s.created.entries[entry]
	s.created.mu.Unlock()
	where := dirPathOf(e.placeholder)
	if where == "" {
		return unix.EBUSY
	}
	if err := mount(func() error { return unix.Unmount(where, unix.MNT_DETACH) }); err != nil {
		return unix.EBUSY
	}
	s.created.mu.Lock()
	s.created.entries = slices.DeleteFunc(s.created.entries, func(c createdEntry) bool { return c == e })
	var pst unix.Stat_t
	if unix.Fstat(e.placeholder, &pst) == nil {
		delete(s.created.placeholders, identityOf(&pst))
	}
	s.created.mu.Unlock()
	unix.Close(e.placeholder)
	unix.Close(e.content)
	return errnoOf(unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR))
}

// unstageGit removes the staged git directory stg, at name in dirfd, which
// the command has emptied: the overlay, then the host's directory, renamed
// aside first and removed as the command would.
func (s *Session) unstageGit(dirfd int, name string, stg int, mount func(func() error) error) syscall.Errno {
	s.created.mu.Lock()
	g := s.stages[stg]
	s.created.mu.Unlock()
	if err := mount(func() error { return unix.Unmount(g.path, unix.MNT_DETACH) }); err != nil {
		return unix.EBUSY
	}
	s.created.mu.Lock()
	s.stages = slices.Delete(s.stages, stg, stg+1)
	s.created.mu.Unlock()
	unix.Close(g.host)
	aside := fmt.Sprintf(".corral-removing-%s-%d", name, time.Now().UnixNano())
	if err := unix.Renameat(dirfd, name, dirfd, aside); err != nil {
		s.notes = append(s.notes, fmt.Sprintf("%s: removed in the sandbox, left on the host (%v)", g.path, err))
		return 0
	}
	if err := os.RemoveAll("/proc/self/fd/" + strconv.Itoa(dirfd) + "/" + aside); err != nil {
		s.notes = append(s.notes, fmt.Sprintf("%s: removed, but %s is left beside it (%v)", g.path, aside, err))
	}
	return 0
}

// emptyDir answers rmdir's ENOTEMPTY for a directory that holds entries.
func emptyDir(dirfd int, name string) syscall.Errno {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(fd)
	names, err := direntNames(fd)
	if err != nil {
		return errnoOf(err)
	}
	if len(names) > 0 {
		return unix.ENOTEMPTY
	}
	return 0
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return unix.EIO
}

// topsInForce returns the names in force listed for the top of a root,
// looked up once.
func (s *Session) topsInForce() []string {
	if s.tops == nil {
		s.tops = []string{}
		for _, n := range s.names {
			if e, ok := Lookup(n); ok && !e.Anywhere {
				s.tops = append(s.tops, n)
			}
		}
	}
	return s.tops
}

// linkedName tells whether p, a name in a writable root, is a target
// startLazy recorded (exact), or a directory above one: made there, or
// renamed there, it would take the place the host's program follows.
func (s *Session) linkedName(p string) (exact, above bool) {
	for _, t := range s.linked {
		if t == p {
			return true, true
		}
		if strings.HasPrefix(t, p+"/") {
			above = true
		}
	}
	return false, above
}

// SetHomes gives the caller's home directories: a name listed for the top
// of a root is guarded relative to each home too, where a writable root
// lies inside one (--writable ~/.config makes ~/.config/git the global
// config git on the host reads).
func (s *Session) SetHomes(homes []string) {
	if s != nil {
		s.homes = homes
	}
}

// topInHome returns the entry a name listed for the top of a root makes
// of p, a path in a writable root inside a home, relative to that home:
// the name listed; exact when p is the entry, above when p is a directory above one, in
// when p lies inside one.
func (s *Session) topInHome(p string) (name, entry string, exact, above, in bool) {
	for _, h := range s.homes {
		if p == h || !pathtree.Within(p, h) {
			continue
		}
		rel := relOf(h, p)
		for _, n := range s.topsInForce() {
			switch {
			case rel == n:
				return n, path.Join(h, n), true, true, false
			case strings.HasPrefix(n, rel+"/"):
				above = true
			case strings.HasPrefix(rel, n+"/"):
				return n, path.Join(h, n), false, false, true
			}
		}
	}
	return "", "", false, above, false
}
