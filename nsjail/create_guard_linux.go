package nsjail

import (
	"path"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/guard"
	"github.com/corralhq/corral/internal/pathtree"
)

// What a lazy guard (guard.Session.Lazy) asks of the creator: every call
// that writes in a writable root, a name or an existing file, is performed
// here, and guarded first by where it acts. A git directory is staged when
// the command first writes into it, and the call is then made in the
// stage; a protected entry the host had is read-only to the command, as
// its read-only bind was to a walk's.

// guarded checks the directory pl acts in. It returns pl, or pl opened
// again in the git directory staged for it; or, for a call the guard
// refuses, the answer. source says pl is what a rename moves away, which
// may leave a protected entry: only its git directory is staged.
func (c *creator) guarded(t *task, pl place, source bool) (place, answer, bool) {
	if !c.sess.Lazy() {
		return pl, answer{}, true
	}
	var st unix.Stat_t
	if err := unix.Fstat(pl.dir, &st); err != nil {
		return pl, failed(err), false
	}
	key := [2]uint64{st.Dev, st.Ino}
	if c.plain[key] {
		return pl, answer{}, true
	}
	dir := dirPath(pl.dir)
	if dir == "" {
		// Too deep to name (beyond PATH_MAX): where it lies is told by
		// its mount, and what holds it by nothing but its own name
		// (guard.Session.Protects with no directory).
		pl.outside = !c.writableMount(pl.dir) && !c.sess.IsStaged(st.Dev)
		return pl, answer{}, true
	}
	if !slices.ContainsFunc(c.writable, func(w string) bool { return pathtree.Within(dir, w) }) && !c.sess.IsStaged(st.Dev) {
		// Nothing is made, nor any file but a device written, where
		// the command's own call could not.
		pl.outside = true
		return pl, answer{}, true
	}
	kind, at := c.sess.Within(dir, st.Dev)
	switch kind {
	case guard.InEntry:
		if source {
			return pl, answer{}, true
		}
		return pl, c.refuse(dir, pl.name, "inside the protected entry "+at+" (read-only)", unix.EROFS), false
	case guard.Git:
		if err := c.sess.StageGit(at, false, stagingGit); err != nil {
			return pl, c.refuse(dir, pl.name, "in a git directory that could not be staged ("+err.Error()+")", unix.EPERM), false
		}
		// The descriptor is the host's directory, under the stage now:
		// the same path leads into the stage.
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
		fd, err := unix.Openat2(c.root, strings.TrimPrefix(dir, "/")+"/", &how)
		if err != nil {
			return pl, failed(err), false
		}
		return place{dir: t.keep(fd), name: pl.name, trailing: pl.trailing}, answer{}, true
	}
	if kind == guard.Plain {
		if len(c.plain) >= maxPlain {
			clear(c.plain)
		}
		c.plain[key] = true
	}
	return pl, answer{}, true
}

// maxPlain bounds the directories the creator remembers as plain.
const maxPlain = 1 << 16

// forgetPlain drops what the creator remembers of plain directories: a
// rename can move a directory under a protected name or a repository,
// a removed directory's inode can come back as another, a new refs/ or
// objects/ can make a directory a repository's common directory.
func (c *creator) forgetPlain() {
	clear(c.plain)
	c.sess.ForgetPlain()
}

// existingProtected answers a call that changes fd, a file the creator
// opened at pl for the command, when pl's name is protected and the file is
// the host's entry rather than one staged: read-only, as its bind was.
func (c *creator) existingProtected(pl place, fd int) (answer, bool) {
	if !c.sess.Lazy() {
		return answer{}, false
	}
	dir, name, protected := c.protects(pl)
	if !protected || c.sess.StagedFile(fd) || c.sess.MadeFile(fd) {
		return answer{}, false
	}
	var st unix.Stat_t
	if unix.Fstat(pl.dir, &st) == nil {
		if kind, _ := c.sess.Within(dirPath(pl.dir), st.Dev); kind == guard.Staged {
			return answer{}, false
		}
	}
	return c.refuse(dir, name, "a protected entry (read-only)", unix.EROFS), true
}

// protectedAt answers an open that would change the existing entry at pl
// when the creator finds its name protected (see existingProtected),
// before anything is opened: an open that truncates must not reach the
// host's file to be refused after.
func (c *creator) protectedAt(pl place) (answer, bool) {
	fd, err := unix.Openat(pl.dir, pl.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return answer{}, false // none yet, or none to open: the open says
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return answer{}, false // followed by the open, target by target
	}
	return c.existingProtected(pl, fd)
}

// gitFile makes a new .git file (git worktree add, a submodule's) on the
// host as the command asked, unstaged: it only names a git directory,
// and every one git on the host could take is guarded where it lies (an
// existing repository's is staged when written, a HEAD the command makes
// is staged and none git takes), so it can lead git to nothing the command
// planted. Staged, it would be a mount point no `git worktree remove`
// could delete. It is dealt with at exit as any new protected entry: kept
// when it names a worktree of a repository in a writable root that names
// it back, held otherwise.
func (c *creator) gitFile(t *task, pl place, flags int, mode uint32, cloexec bool) answer {
	fd, err := unix.Openat(pl.dir, pl.name, flags|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, mode)
	if err != nil {
		return failed(err)
	}
	c.sess.MadeGitFile(fd)
	return c.opened(t, fd, flags, false, cloexec, pl)
}

// writes tells whether open flags ask to change the file.
func writes(flags int) bool {
	return flags&unix.O_ACCMODE != unix.O_RDONLY || flags&unix.O_TRUNC != 0
}

// truncate is truncate(2): the file opened for writing as open would, by
// the creator's checks, then cut.
func (c *creator) truncate(t *task, addr uint64, length int64) answer {
	a := c.open(t, unix.AT_FDCWD, addr, unix.O_WRONLY|unix.O_NONBLOCK, 0)
	if a.file < 0 {
		if a.errno == unix.ENXIO {
			a.errno = unix.EINVAL // a FIFO
		}
		return a
	}
	defer unix.Close(a.file)
	var st unix.Stat_t
	if unix.Fstat(a.file, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
		return errnoAnswer(unix.EINVAL)
	}
	return answerOf(unix.Ftruncate(a.file, length))
}

// chmod is fchmodat(2) and fchmodat2(2): the entry found as the call
// would, following a last symlink unless AT_SYMLINK_NOFOLLOW, guarded,
// then changed.
func (c *creator) chmod(t *task, dirfd int32, addr, mode64 uint64, flags int) answer {
	if flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return errnoAnswer(unix.EINVAL)
	}
	p, errno := t.str(addr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	mode := uint32(mode64) & 0o7777
	if p == "" {
		if flags&unix.AT_EMPTY_PATH == 0 {
			return errnoAnswer(unix.ENOENT)
		}
		return c.fchmod(t, dirfd, mode64)
	}
	pl, errno := t.locate(dirfd, p)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	if errno := t.asCommand(); errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	for hops := 0; hops <= 40; hops++ {
		var a answer
		var ok bool
		if pl, a, ok = c.guarded(t, pl, false); !ok {
			return a
		}
		fd, err := unix.Openat(pl.dir, pl.opName(), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return failed(err)
		}
		t.keep(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return failed(err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
				return errnoAnswer(unix.EOPNOTSUPP) // a symlink's mode cannot change
			}
			if dir := dirPath(pl.dir); procFdDir(dir) {
				// A descriptor's link: glibc's fchmodat with
				// AT_SYMLINK_NOFOLLOW (tar's, for directories) opens the
				// name O_PATH and changes /proc/self/fd/N. What the
				// descriptor names is changed, guarded as fchmod's is.
				return c.chmodLinked(t, dir, pl.name, mode)
			}
			if pl, errno = t.follow(pl); errno != 0 {
				return errnoAnswer(errno)
			}
			continue
		}
		if a, refused := c.existingProtected(pl, fd); refused {
			return a
		}
		return c.chmodFile(t, fd, mode)
	}
	return errnoAnswer(unix.ELOOP)
}

// chmodLinked changes the mode of what descriptor name of the process
// whose fd directory is dir names.
func (c *creator) chmodLinked(t *task, dir, name string, mode uint32) answer {
	pd, errno := t.processDir(strings.TrimSuffix(dir, "/fd"))
	if errno != 0 {
		return errnoAnswer(errno)
	}
	f, err := openLink(pd, "fd/"+name)
	if err != nil {
		return failed(err)
	}
	t.keep(f)
	if a, refused := c.reopenGuarded(f); refused {
		return a
	}
	return c.chmodFile(t, f, mode)
}

// chmodFile changes the mode of fd, which may be O_PATH, as the command.
func (c *creator) chmodFile(t *task, fd int, mode uint32) answer {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return failed(err)
	}
	if errno := mayOpen(fd, &st, unix.O_WRONLY, c.procDevs); errno != 0 && st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return errnoAnswer(unix.EPERM)
	}
	return answerOf(unix.Fchmodat(unix.AT_FDCWD, selfFd(fd), mode, 0))
}

// linkGuarded refuses a hard link to src, a file the command names (O_PATH),
// when src is a protected entry of the host's or lies in one, or in a git
// directory not staged (outside its objects): written through the new
// name, it would change the host's entry. Such a link fails with EXDEV,
// as one out of a read-only bind did; tools copy instead.
func (c *creator) linkGuarded(src int) (answer, bool) {
	if !c.sess.Lazy() {
		return answer{}, false
	}
	p := dirPath(src)
	if !path.IsAbs(p) {
		return answer{}, false
	}
	dir, name := path.Dir(p), path.Base(p)
	var st unix.Stat_t
	unix.Lstat(dir, &st) // none: a directory the sandbox does not show, of no root
	kind, at := c.sess.Within(dir, st.Dev)
	switch kind {
	case guard.InEntry:
		return c.refuse(dir, name, "a hard link to a file inside the protected entry "+at, unix.EXDEV), true
	case guard.Git:
		if rel := strings.TrimPrefix(dir, at); rel == "/objects" || strings.HasPrefix(rel, "/objects/") {
			return answer{}, false
		}
		return c.refuse(dir, name, "a hard link to a file of the git directory "+at, unix.EXDEV), true
	case guard.Staged:
		return answer{}, false
	}
	if _, ok := c.sess.Protects(dir, name); ok && !c.sess.StagedFile(src) {
		return c.refuse(dir, name, "a hard link to a protected entry", unix.EXDEV), true
	}
	return answer{}, false
}

// reopenGuarded refuses to open for writing again, through a descriptor's
// /proc link, a file the guard keeps from the command: one inside a
// protected entry of the host's or a git directory not staged, or a
// protected entry itself. Opened by its path, the same file would be
// guarded (staged, or refused), which a descriptor's link skips.
func (c *creator) reopenGuarded(file int) (answer, bool) {
	if !c.sess.Lazy() {
		return answer{}, false
	}
	p := dirPath(file)
	if !path.IsAbs(p) {
		return answer{}, false // a pipe, a socket, a deleted file: no name to guard
	}
	dir, name := path.Dir(p), path.Base(p)
	var st unix.Stat_t
	unix.Lstat(dir, &st) // none: a directory the sandbox does not show, of no root
	switch kind, at := c.sess.Within(dir, st.Dev); kind {
	case guard.InEntry:
		return c.refuse(dir, name, "inside the protected entry "+at+" (read-only)", unix.EROFS), true
	case guard.Git:
		return c.refuse(dir, name, "in the git directory "+at+", through a descriptor (open it by its name)", unix.EROFS), true
	case guard.Staged:
		return answer{}, false
	}
	if _, ok := c.sess.Protects(dir, name); ok && !c.sess.StagedFile(file) {
		return c.refuse(dir, name, "a protected entry (read-only)", unix.EROFS), true
	}
	return answer{}, false
}

// rmdir is rmdir(2) and unlinkat(2) with AT_REMOVEDIR. A directory the
// guard mounted (a protected directory the command made, a git directory
// staged, a staged repository's objects) is a mount point, which the
// kernel would not remove (EBUSY): the guard removes it (guard.Session.
// Unstage) once the command has emptied it, so deleting a repository, or
// a directory holding one, works as on the host. Any other goes on in the
// kernel as the command: a name swapped meanwhile gains nothing, the
// kernel refusing a mount point.
func (c *creator) rmdir(t *task, dirfd int32, addr uint64) answer {
	if !c.sess.Lazy() {
		return answer{file: -1, cont: true}
	}
	pl, errno := t.placeAt(dirfd, addr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	if pl.name == "." || pl.name == ".." {
		return answer{file: -1, cont: true}
	}
	if errno, ok := c.sess.Unstage(pl.dir, pl.name, stagingGit); ok {
		return errnoAnswer(errno)
	}
	return answer{file: -1, cont: true}
}

// guardedNew is guarded for a call that makes a name at pl, which is
// refused too where the command may write nothing (outside).
func (c *creator) guardedNew(t *task, pl place) (place, answer, bool) {
	pl, a, ok := c.guarded(t, pl, false)
	if !ok {
		return pl, a, false
	}
	if a, no := outside(pl); no {
		return pl, a, false
	}
	return pl, answer{}, true
}

// outside answers a call that makes or moves a name at pl, which lies
// where the command may write nothing: EACCES, as Landlock answers it.
func outside(pl place) (answer, bool) {
	if pl.outside {
		return errnoAnswer(outsideErrno(pl.dir)), true
	}
	return answer{}, false
}

// outsideErrno is how the kernel fails a write where the command may
// write nothing: EROFS on a read-only mount, which it checks first, else
// Landlock's EACCES.
func outsideErrno(fd int) syscall.Errno {
	var sf unix.Statfs_t
	if unix.Fstatfs(fd, &sf) == nil && sf.Flags&unix.ST_RDONLY != 0 {
		return unix.EROFS
	}
	return unix.EACCES
}

// outsideFile answers an open that writes, which found fd at a place
// where the command may write nothing: only a device Landlock grants
// (mayOpen decides which) is opened there.
func outsideFile(fd int) (answer, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return errnoAnswer(outsideErrno(fd)), true
	}
	return answer{}, false
}

// inStaged reports whether pl's directory is staged content.
func (c *creator) inStaged(pl place) bool {
	var st unix.Stat_t
	return unix.Fstat(pl.dir, &st) == nil && c.sess.IsStaged(st.Dev)
}

// newGitDir makes a new .git directory (git init, git clone) on the host,
// holding only an empty objects directory, and stages it at once as a git
// directory the host had is staged when first written: what git writes
// there goes to the stage, its objects to the host's objects directory,
// and the merge at exit lands what the allowlist lets through. Git on the
// host takes no directory without a HEAD for a repository, so the host
// sees none while the command runs; and a clone's objects are written
// once, not staged in memory and copied at exit.
func (c *creator) newGitDir(pl place, dir string, mode uint32) answer {
	if err := unix.Mkdirat(pl.dir, pl.name, mode); err != nil {
		return failed(err)
	}
	fd, err := unix.Openat(pl.dir, pl.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Unlinkat(pl.dir, pl.name, unix.AT_REMOVEDIR)
		return failed(err)
	}
	defer unix.Close(fd)
	undo := func(why error) answer {
		unix.Unlinkat(fd, "objects", unix.AT_REMOVEDIR)
		unix.Unlinkat(pl.dir, pl.name, unix.AT_REMOVEDIR)
		return c.refuse(dir, pl.name, "could not be staged ("+why.Error()+")", unix.EPERM)
	}
	if err := unix.Mkdirat(fd, "objects", 0o777); err != nil {
		return undo(err)
	}
	p := dirPath(fd)
	if !path.IsAbs(p) {
		return undo(unix.ENAMETOOLONG)
	}
	if err := c.sess.StageGit(p, true, stagingGit); err != nil {
		return undo(err)
	}
	return done
}

// writableMount reports whether directory fd lies on the mount of a
// writable path (see creator.writable), by its mount id.
func (c *creator) writableMount(fd int) bool {
	if c.writableMounts == nil {
		c.writableMounts = map[uint64]bool{}
		for _, w := range c.writable {
			if id, ok := mountID(unix.AT_FDCWD, w); ok {
				c.writableMounts[id] = true
			}
		}
	}
	id, ok := mountID(fd, "")
	return ok && c.writableMounts[id]
}

func mountID(dir int, p string) (uint64, bool) {
	var sx unix.Statx_t
	flags := unix.AT_SYMLINK_NOFOLLOW
	if p == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	if unix.Statx(dir, p, flags, unix.STATX_MNT_ID, &sx) != nil || sx.Mask&unix.STATX_MNT_ID == 0 {
		return 0, false
	}
	return sx.Mnt_id, true
}

// openTmpfile is an open with O_TMPFILE, which makes a file with no name
// in the directory pl names (a name comes only with linkat, which stops
// here too): guarded as any call that writes in that directory.
func (c *creator) openTmpfile(t *task, pl place, flags int, mode uint32) answer {
	if errno := t.asCommand(); errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	d, err := unix.Openat(pl.dir, pl.opName(), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return failed(err)
	}
	in, a, ok := c.guardedNew(t, place{dir: t.keep(d), name: "."})
	if !ok {
		return a
	}
	fd, err := unix.Openat(in.dir, ".", flags|unix.O_CLOEXEC, mode)
	if err != nil {
		return failed(err)
	}
	return answer{file: fd, cloexec: flags&unix.O_CLOEXEC != 0}
}

// fchmod is fchmod(2), and fchmodat with AT_EMPTY_PATH: the command's
// descriptor, guarded by the path of what it names (reopenGuarded), then
// changed. A mode is what makes a hook or a script on PATH run.
func (c *creator) fchmod(t *task, fd int32, mode64 uint64) answer {
	f, _, errno := t.base(fd, "")
	if errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	if a, refused := c.reopenGuarded(f); refused {
		return a
	}
	return c.chmodFile(t, f, uint32(mode64)&0o7777)
}
