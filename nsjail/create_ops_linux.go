package nsjail

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/guard"
)

// The calls the creator performs, each as the kernel would for the
// command, but for protected names: a new directory or file under one is
// staged (stageDir, stageFile), any other way of making one is refused
// with a report, and a rename onto one fails with EXDEV, which makes mv
// and the like copy instead, through the calls that stage.

func answerOf(err error) answer {
	if err == nil {
		return done
	}
	return failed(err)
}

// errnoAnswer fails the call with errno.
func errnoAnswer(errno syscall.Errno) answer { return answer{file: -1, errno: errno} }

// gone is the answer to a call that stopped waiting while it was read.
var gone = answer{file: -1, gone: true}

func (c *creator) open(t *task, dirfd int32, addr, flags64, mode64 uint64) answer {
	flags, mode := int(int32(flags64)), uint32(mode64)&0o7777
	pl, errno := t.placeAt(dirfd, addr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	if flags&unix.O_TMPFILE == unix.O_TMPFILE {
		return c.openTmpfile(t, pl, flags, mode)
	}
	if pl.trailing || pl.name == "." || pl.name == ".." {
		return errnoAnswer(unix.EISDIR)
	}
	if errno := t.asCommand(); errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	cloexec := flags&unix.O_CLOEXEC != 0
	through := false // a link on the way has a protected name
	for hops := 0; hops <= 40; hops++ {
		var a answer
		var ok bool
		if pl, a, ok = c.guarded(t, pl, false); !ok {
			return a
		}
		dir, name, protected := c.protects(pl)
		through = through || protected
		if protected && writes(flags) {
			if a, refused := c.protectedAt(pl); refused {
				return a
			}
		}
		fl := flags | unix.O_NOFOLLOW | unix.O_NOCTTY | unix.O_CLOEXEC
		if through {
			// Never create here: a new entry under a protected name is
			// staged, and none is made through a link that has one.
			fl &^= unix.O_CREAT | unix.O_EXCL
			if flags&unix.O_EXCL != 0 && exists(pl) {
				return errnoAnswer(unix.EEXIST)
			}
		}
		if a, no := c.refusedNew(pl); no && fl&unix.O_CREAT != 0 {
			return a
		}
		if pl.outside {
			fl &^= unix.O_CREAT | unix.O_EXCL // nothing made there
		}
		if !newFile(fl) {
			fl |= unix.O_NONBLOCK // a FIFO must not hold up the listener
		}
		fd, err := unix.Openat(pl.dir, pl.name, fl, mode)
		switch {
		case err == nil:
			if pl.outside {
				if a, refused := outsideFile(fd); refused {
					unix.Close(fd)
					return a
				}
			}
			return c.opened(t, fd, flags, fl&unix.O_NONBLOCK != 0 && flags&unix.O_NONBLOCK == 0, cloexec, pl)
		case err == unix.ELOOP && flags&(unix.O_NOFOLLOW|unix.O_EXCL) == 0:
			if dir == "" {
				dir = dirPath(pl.dir)
			}
			if procFdDir(dir) {
				return c.reopen(t, dir, pl.name, flags, cloexec)
			}
			next, errno := t.follow(pl)
			if errno != 0 {
				return errnoAnswer(errno)
			}
			pl = next
		case err == unix.ENOENT && pl.outside && flags&unix.O_CREAT != 0:
			return errnoAnswer(outsideErrno(pl.dir))
		case err == unix.ENOENT && through && flags&unix.O_CREAT != 0:
			if protected && pl.name == guard.GitDir && name == guard.GitDir && c.sess.Lazy() {
				return c.gitFile(t, pl, flags, mode, cloexec)
			}
			if protected {
				return c.stageFile(t, pl, dir, name, flags, mode, cloexec)
			}
			return c.refuse(dirPath(pl.dir), pl.name, "a new entry through a symlink with a protected name", unix.EPERM)
		case err == unix.ENXIO && flags&unix.O_NONBLOCK == 0:
			c.blockingOpen(t, pl, flags, cloexec, false) // a FIFO with no reader yet
			return gone
		default:
			return failed(err)
		}
	}
	return errnoAnswer(unix.ELOOP)
}

// protects tells whether the entry pl names is protected (see
// guard.Session.Protects), and by which name, with the path of its
// directory. The path is read only for a name that may be protected.
func (c *creator) protects(pl place) (dir, name string, ok bool) {
	if !c.sess.MayProtect(pl.name) {
		return c.inPlaceholder(pl)
	}
	dir = dirPath(pl.dir)
	if name, ok = c.sess.Protects(dir, pl.name); !ok {
		return c.gitPart(pl, dir)
	}
	return dir, name, ok
}

// holds is protects for a name that a directory renamed there could bring
// a protected entry under (guard.Session.HoldsProtected).
func (c *creator) holds(pl place) (dir, name string, ok bool) {
	if !c.sess.MayProtect(pl.name) {
		return c.inPlaceholder(pl)
	}
	dir = dirPath(pl.dir)
	if name, ok = c.sess.HoldsProtected(dir, pl.name); !ok {
		return c.gitPart(pl, dir)
	}
	return dir, name, ok
}

// unstageable answers a call that would make pl, new, something no stage
// can hold (what: a symlink, a hard link, a FIFO or socket) at a
// protected name, or a name guard.Session.Refuses refuses: refused with errno
// and recorded. ok is false for any other.
func (c *creator) unstageable(pl place, what string, errno syscall.Errno) (a answer, ok bool) {
	if a, no := c.refusedNew(pl); no {
		return a, true
	}
	if dir, name, protected := c.protects(pl); protected && !exists(pl) {
		return c.refuse(dir, name, "a new protected entry made as "+what, errno), true
	}
	return answer{}, false
}

func exists(pl place) bool {
	var st unix.Stat_t
	return unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// procFdDir reports whether dir is a process's (or thread's) fd directory,
// whose links are magic.
func procFdDir(dir string) bool {
	parts := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	switch len(parts) {
	case 3:
		return parts[0] == "proc" && numeric(parts[1]) && parts[2] == "fd"
	case 5:
		return parts[0] == "proc" && numeric(parts[1]) && parts[2] == "task" && numeric(parts[3]) && parts[4] == "fd"
	}
	return false
}

// follow resolves the symlink pl names, as open follows a last name that
// is a link: to the directory and name its target gives.
func (t *task) follow(pl place) (place, syscall.Errno) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(pl.dir, pl.name, buf)
	if err == unix.EINVAL {
		return pl, 0 // no longer a link: open it again
	}
	if err != nil {
		return place{}, err.(syscall.Errno)
	}
	return t.locateFrom(pl.dir, string(buf[:n]))
}

// opened checks a file the creator opened for the command, and answers
// with it.
//
// nonblock says the creator added O_NONBLOCK to flags to open it.
func (c *creator) opened(t *task, fd, flags int, nonblock, cloexec bool, pl place) answer {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return failed(err)
	}
	if errno := mayOpen(fd, &st, flags, c.procDevs); errno != 0 {
		unix.Close(fd)
		return errnoAnswer(errno)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFIFO && flags&unix.O_NONBLOCK == 0 {
		// Opened without waiting for the other end: open again, waiting,
		// on a thread of its own.
		unix.Close(fd)
		c.blockingOpen(t, pl, flags, cloexec, false)
		return gone
	}
	if nonblock {
		// What the file's flags are without it: of those F_SETFL sets,
		// open took these from flags (O_ASYNC it leaves to fcntl).
		unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags&(unix.O_APPEND|unix.O_DIRECT|unix.O_NOATIME))
	}
	return answer{file: fd, cloexec: cloexec}
}

// newFile tells whether an open with flags makes a new regular file or
// fails: never a FIFO that would wait for its other end.
func newFile(flags int) bool {
	return flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL
}

// mayOpen refuses what Landlock refuses the command among files the mount
// tree lets it open: writing device nodes other than the few granted, and
// anything of /proc (where the init's own files would be the init's to
// open). known, when not nil, keeps what was learnt of each device.
func mayOpen(fd int, st *unix.Stat_t, flags int, known map[uint64]bool) syscall.Errno {
	writes := flags&unix.O_ACCMODE != unix.O_RDONLY || flags&unix.O_TRUNC != 0
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		if writes && !grantedDevice(st.Rdev) {
			return unix.EACCES
		}
	case unix.S_IFBLK:
		return unix.EACCES
	}
	proc, ok := known[st.Dev]
	if !ok {
		var sf unix.Statfs_t
		if err := unix.Fstatfs(fd, &sf); err != nil {
			return err.(syscall.Errno)
		}
		// A device number names one file system while it is mounted, and
		// the command mounts none.
		proc = sf.Type == unix.PROC_SUPER_MAGIC
		if known != nil {
			known[st.Dev] = proc
		}
	}
	if proc {
		return unix.EACCES
	}
	return 0
}

// grantedDevice: null, zero (but under a memory limit, see devices), full,
// tty, ptmx and the pseudo-terminals.
func grantedDevice(rdev uint64) bool {
	major, minor := unix.Major(rdev), unix.Minor(rdev)
	switch {
	case major == 1:
		return minor == 3 || minor == 5 && !zeroReadOnly || minor == 7
	case major == 5:
		return minor == 0 || minor == 2
	}
	return major >= 136 && major <= 143
}

// reopen opens, for the command, what a descriptor of one of its processes
// is (/proc/PID/fd/N, as /dev/stdout leads to), with no more access than
// that descriptor has: Landlock grants the command its standard streams
// only so, and the creator is not under Landlock.
func (c *creator) reopen(t *task, dir, name string, flags int, cloexec bool) answer {
	pd, errno := t.processDir(strings.TrimSuffix(dir, "/fd"))
	if errno != 0 {
		return errnoAnswer(errno)
	}
	held, ok := fdFlags(pd, name)
	if !ok {
		return errnoAnswer(unix.ENOENT)
	}
	link, err := openLink(pd, "fd/"+name)
	if err != nil {
		return failed(err)
	}
	t.keep(link)
	if !modeWithin(flags, held) && !sandboxWritable(link) {
		return errnoAnswer(unix.EACCES)
	}
	if writes(flags) {
		if a, refused := c.reopenGuarded(link); refused {
			return a
		}
	}
	// Opened again through the init's own descriptor, with the command's
	// permissions alone.
	fd, err := unix.Open(selfFd(link), flags&^(unix.O_CREAT|unix.O_EXCL)|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return failed(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return failed(err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFIFO && flags&unix.O_NONBLOCK == 0 {
		unix.Close(fd)
		c.blockingOpen(t, place{dir: link}, flags, cloexec, true)
		return gone
	}
	if flags&unix.O_NONBLOCK == 0 {
		// What the file's flags are without it: of those F_SETFL sets,
		// open took these from flags (O_ASYNC it leaves to fcntl).
		unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags&(unix.O_APPEND|unix.O_DIRECT|unix.O_NOATIME))
	}
	return answer{file: fd, cloexec: cloexec}
}

// sandboxWritable reports whether file fd lies on a writable mount of the
// sandbox's own tree other than /proc: a file Landlock lets the command
// write there, as it lies in a writable root, /tmp or /dev/shm. A file
// the caller handed in lies on a mount of the host's, not in this table.
func sandboxWritable(fd int) bool {
	var sx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &sx) != nil || sx.Mask&unix.STATX_MNT_ID == 0 {
		return false
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	id := strconv.FormatUint(sx.Mnt_id, 10) + " "
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, id) {
			continue
		}
		f := strings.Fields(line)
		sep := slicesIndex(f, "-")
		if len(f) < 6 || sep < 0 || sep+1 >= len(f) {
			return false
		}
		rw := strings.HasPrefix(f[5], "rw")
		return rw && f[sep+1] != "proc" && f[sep+1] != "sysfs"
	}
	return false
}

// fdFlags reads the open flags of descriptor name of the process whose
// /proc directory is pd.
func fdFlags(pd int, name string) (int, bool) {
	var fd int
	err := ptraced(func() (err error) {
		fd, err = unix.Openat(pd, "fdinfo/"+name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	b := make([]byte, 512)
	n, _ := unix.Read(fd, b)
	for _, line := range strings.Split(string(b[:max(n, 0)]), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			f, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return int(f), err == nil
		}
	}
	return 0, false
}

// modeWithin reports whether an open with flags asks no more than a
// descriptor with held allows: reading only if it reads, writing only if
// it writes, truncating only if it writes and does not append.
func modeWithin(flags, held int) bool {
	reads := func(f int) bool { return f&unix.O_ACCMODE == unix.O_RDONLY || f&unix.O_ACCMODE == unix.O_RDWR }
	writes := func(f int) bool { return f&unix.O_ACCMODE == unix.O_WRONLY || f&unix.O_ACCMODE == unix.O_RDWR }
	if reads(flags) && !reads(held) || writes(flags) && !writes(held) {
		return false
	}
	return flags&unix.O_TRUNC == 0 || writes(held) && held&unix.O_APPEND == 0
}

// blockingOpen opens pl, which may wait for the other end of a FIFO, on a
// thread of its own, and answers the call from there; with magic, pl.dir
// is the file itself, opened O_PATH, reopened through /proc/self/fd.
func (c *creator) blockingOpen(t *task, pl place, flags int, cloexec, magic bool) {
	dir, err := unix.Dup(pl.dir)
	if err != nil {
		failNow(c, t, err)
		return
	}
	name, id := pl.name, t.n.ID
	lockedThread(func(ok bool) {
		defer unix.Close(dir)
		if !ok {
			failID(c, id, unix.EIO)
			return
		}
		fl := flags&^(unix.O_CREAT|unix.O_EXCL) | unix.O_NOCTTY | unix.O_CLOEXEC
		var fd int
		var err error
		if magic {
			fd, err = unix.Open(selfFd(dir), fl, 0)
		} else {
			fd, err = unix.Openat(dir, name, fl|unix.O_NOFOLLOW, 0)
		}
		if err != nil {
			failID(c, id, err.(syscall.Errno))
			return
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err == nil {
			if errno := mayOpen(fd, &st, flags, nil); errno != 0 {
				unix.Close(fd)
				failID(c, id, errno)
				return
			}
		}
		returnFile(c, id, fd, cloexec)
		unix.Close(fd)
	})
}

func (c *creator) mkdir(t *task, dirfd int32, addr, mode64 uint64) answer {
	pl, errno := t.placeAt(dirfd, addr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	if errno := t.asCommand(); errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	mode := uint32(mode64) & 0o7777
	pl, a, ok := c.guardedNew(t, pl)
	if !ok {
		return a
	}
	if a, no := c.refusedNew(pl); no {
		return a
	}
	if dir, name, protected := c.protects(pl); protected && name != guard.HeadName {
		if name == guard.GitDir && pl.name == guard.GitDir && c.sess.Lazy() && dir != "" && !c.inStaged(pl) {
			return c.newGitDir(pl, dir, mode)
		}
		return c.stageDir(pl, dir, name, mode) // a directory named HEAD is no git's HEAD
	}
	if err := unix.Mkdirat(pl.dir, pl.opName(), mode); err != nil {
		return failed(err)
	}
	if pl.name == "refs" || pl.name == "objects" {
		c.forgetPlain() // its directory may now be a common directory
	}
	if c.sess.Lazy() {
		if fd, err := unix.Openat(pl.dir, pl.name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
			c.sess.Made(fd)
			unix.Close(fd)
		}
	}
	return done
}

func (c *creator) mknod(t *task, dirfd int32, addr, mode64, dev uint64) answer {
	pl, errno := t.placeAt(dirfd, addr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	if errno := t.asCommand(); errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	mode := uint32(mode64)
	if typ := mode & unix.S_IFMT; typ == unix.S_IFCHR || typ == unix.S_IFBLK {
		if c.landlock {
			return errnoAnswer(unix.EACCES) // Landlock grants no device node
		}
		return errnoAnswer(unix.EPERM)
	}
	if mode&unix.S_IFMT == unix.S_IFSOCK && c.noSockets {
		return errnoAnswer(unix.EACCES) // as Landlock, which grants none
	}
	pl, a, ok := c.guardedNew(t, pl)
	if !ok {
		return a
	}
	if c.sess.BindsObjects() && c.sess.InObjects(dirPath(pl.dir)) {
		// A FIFO there would hang every later git on the host that
		// reads the objects (git status in a shell prompt, an editor).
		return c.refuse(dirPath(pl.dir), pl.name, "a FIFO or socket in git's objects", unix.EPERM)
	}
	if a, no := c.unstageable(pl, "a FIFO or socket", unix.EPERM); no {
		return a
	}
	return answerOf(unix.Mknodat(pl.dir, pl.opName(), mode, int(dev)))
}

func (c *creator) symlink(t *task, targetAddr uint64, dirfd int32, addr uint64) answer {
	target, errno := t.str(targetAddr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	pl, errno := t.placeAt(dirfd, addr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	pl, a, ok := c.guardedNew(t, pl)
	if !ok {
		return a
	}
	if a, no := c.intoObjects(pl, true, false); no {
		return a
	}
	if a, no := c.unstageable(pl, "a symlink", unix.EPERM); no {
		return a
	}
	return answerOf(unix.Symlinkat(target, pl.dir, pl.opName()))
}

func (c *creator) link(t *task, olddirfd int32, oldAddr uint64, newdirfd int32, newAddr uint64, flags int) answer {
	oldp, errno := t.str(oldAddr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	newp, errno := t.str(newAddr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	src, errno := t.linkSource(olddirfd, oldp, flags)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	pl, errno := t.locate(newdirfd, newp)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	if a, refused := c.linkGuarded(src); refused {
		return a
	}
	pl, a, ok := c.guardedNew(t, pl)
	if !ok {
		return a
	}
	if c.sess.BindsObjects() {
		if isLink, _ := kindAt(src, ""); isLink {
			if a, no := c.intoObjects(pl, true, false); no {
				return a
			}
		}
	}
	if a, no := c.unstageable(pl, "a hard link", unix.EPERM); no {
		return a
	}
	return answerOf(unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(src), pl.dir, pl.opName(), unix.AT_SYMLINK_FOLLOW))
}

// linkSource opens what link's old path names, O_PATH, following a last
// symlink only with AT_SYMLINK_FOLLOW, as link would.
func (t *task) linkSource(dirfd int32, p string, flags int) (int, syscall.Errno) {
	if flags&^(unix.AT_EMPTY_PATH|unix.AT_SYMLINK_FOLLOW) != 0 {
		return -1, unix.EINVAL
	}
	if p == "" {
		if flags&unix.AT_EMPTY_PATH == 0 {
			return -1, unix.ENOENT
		}
		fd, _, errno := t.base(dirfd, "")
		return fd, errno
	}
	pl, errno := t.locate(dirfd, p)
	if errno != 0 {
		return -1, errno
	}
	for hops := 0; hops <= 40; hops++ {
		fd, err := unix.Openat(pl.dir, pl.opName(), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err.(syscall.Errno)
		}
		t.keep(fd)
		var st unix.Stat_t
		if flags&unix.AT_SYMLINK_FOLLOW == 0 || unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return fd, 0
		}
		if dir := dirPath(pl.dir); procFdDir(dir) {
			pd, errno := t.processDir(strings.TrimSuffix(dir, "/fd"))
			if errno != 0 {
				return -1, errno
			}
			mfd, err := openLink(pd, "fd/"+pl.name)
			if err != nil {
				return -1, err.(syscall.Errno)
			}
			return t.keep(mfd), 0
		}
		if pl, errno = t.follow(pl); errno != 0 {
			return -1, errno
		}
	}
	return -1, unix.ELOOP
}

func (c *creator) rename(t *task, olddirfd int32, oldAddr uint64, newdirfd int32, newAddr uint64, flags uint) answer {
	oldp, errno := t.str(oldAddr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	newp, errno := t.str(newAddr)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	from, errno := t.locate(olddirfd, oldp)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	to, errno := t.locate(newdirfd, newp)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	var a answer
	var ok bool
	if from, a, ok = c.guarded(t, from, true); !ok {
		return a
	}
	if to, a, ok = c.guarded(t, to, false); !ok {
		return a
	}
	if a, no := outside(from); no {
		return a
	}
	if a, no := outside(to); no {
		return a
	}
	if a, no := c.refusedNew(to); no {
		return a
	}
	if a, no := c.movedIntoObjects(from, to, flags); no {
		return a
	}
	if toDir, name, protected := c.holds(to); protected {
		if a, ok := c.renameFile(from, to, toDir, flags); ok {
			return a
		}
		return c.refuse(toDir, to.name, "renamed onto a protected name ("+name+"; copy it there instead)", unix.EXDEV)
	}
	if flags&unix.RENAME_EXCHANGE != 0 {
		if fromDir, name, protected := c.holds(from); protected {
			return c.refuse(fromDir, from.name, "exchanged with another entry ("+name+")", unix.EXDEV)
		}
	}
	return answerOf(unix.Renameat2(from.dir, from.opName(), to.dir, to.opName(), flags))
}

// renameFile renames a regular file onto a protected file name, as an
// atomic save or git's lock file does (.gitmodules.lock to .gitmodules): the
// content is copied into a staged file there (made for it, or one staged
// before) and the old name removed. It reports false for what it does not
// do this way (a directory, a flag but RENAME_NOREPLACE, a name above a
// protected one, a file the host put there meanwhile).
func (c *creator) renameFile(from, to place, toDir string, flags uint) (answer, bool) {
	if flags&^unix.RENAME_NOREPLACE != 0 || to.trailing {
		return answer{}, false
	}
	if _, _, exact := c.protects(to); !exact {
		return answer{}, false
	}
	var src unix.Stat_t
	if err := unix.Fstatat(from.dir, from.opName(), &src, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return failed(err), true
	}
	if src.Mode&unix.S_IFMT != unix.S_IFREG {
		return answer{}, false
	}
	in, err := unix.Openat(from.dir, from.opName(), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return failed(err), true
	}
	defer unix.Close(in)
	var dst unix.Stat_t
	switch err := unix.Fstatat(to.dir, to.name, &dst, unix.AT_SYMLINK_NOFOLLOW); {
	case err == unix.ENOENT:
		c.setUmask(0) // the staged file takes the source's mode as it is
		if a := c.stageNew(to, toDir, src.Mode&0o7777); a.errno != 0 {
			return a, true
		}
	case err != nil:
		return failed(err), true
	case flags&unix.RENAME_NOREPLACE != 0:
		return errnoAnswer(unix.EEXIST), true
	default:
		var parent unix.Stat_t
		if unix.Fstat(to.dir, &parent) != nil || parent.Dev == dst.Dev || dst.Mode&unix.S_IFMT != unix.S_IFREG {
			return answer{}, false // not a staged file: the host's, or another kind
		}
	}
	out, err := unix.Openat(to.dir, to.name, unix.O_WRONLY|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.EROFS {
			err = unix.EBUSY // an entry bound read-only: a mount point, as rename says
		}
		return failed(err), true
	}
	defer unix.Close(out)
	if err := copyFile(out, in); err != nil {
		return failed(err), true
	}
	return answerOf(unix.Unlinkat(from.dir, from.opName(), 0)), true
}

// copyFile copies what is left to read of in to out.
func copyFile(out, in int) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(in, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		for b := buf[:n]; len(b) > 0; {
			m, err := unix.Write(out, b)
			if err != nil && err != unix.EINTR {
				return err
			}
			b = b[max(m, 0):]
		}
	}
}

// stageDir makes a new protected directory: an empty one on the host, and
// over it in the sandbox a tmpfs of its own, which the guard puts on the
// host when the command is gone.
func (c *creator) stageDir(pl place, dir, name string, mode uint32) answer {
	if c.sess.Full() {
		return c.refuse(dir, pl.name, "too many new protected entries", unix.EPERM)
	}
	if err := unix.Mkdirat(pl.dir, pl.name, mode); err != nil {
		return failed(err)
	}
	ph, err := unix.Openat(pl.dir, pl.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Unlinkat(pl.dir, pl.name, unix.AT_REMOVEDIR)
		return failed(err)
	}
	var st unix.Stat_t
	unix.Fstat(ph, &st)
	// A directory of the staging tmpfs, which bounds all staging together
	// (the /tmp limit), mounted on the placeholder: executable, unlike the
	// rest of the staging tmpfs (a new .local/bin, .husky).
	mfd := -1
	tmpfs := c.sess.StagingTmpfs()
	c.nfiles++
	sub := "dir-" + strconv.Itoa(c.nfiles)
	err = unix.Mkdirat(tmpfs, sub, 0o700)
	if err == nil {
		mfd, err = unix.Openat(tmpfs, sub, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err == nil {
		unix.Fchmod(mfd, st.Mode&0o7777)
		err = mounting(func() error {
			return retry(func() error {
				tree, err := unix.OpenTree(tmpfs, sub, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
				if err != nil {
					return err
				}
				defer unix.Close(tree)
				attr := &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_NOEXEC}
				if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, attr); err != nil {
					return err
				}
				return unix.MoveMount(tree, "", ph, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
			})
		})
	}
	if err != nil || !c.sess.Staged(ph, mfd, true) {
		unix.Close(ph)
		if mfd >= 0 {
			unix.Close(mfd)
		}
		unix.Unlinkat(pl.dir, pl.name, unix.AT_REMOVEDIR)
		return c.refuse(dir, name, fmt.Sprintf("could not be staged (%v)", err), unix.EPERM)
	}
	return done
}

// stageFile makes a new protected file: an empty one on the host, and over
// it in the sandbox a file of the init's tmpfs, then opens that for the
// command.
func (c *creator) stageFile(t *task, pl place, dir, name string, flags int, mode uint32, cloexec bool) answer {
	if a := c.stageNew(pl, dir, mode); a.errno != 0 {
		return a
	}
	fd, err := unix.Openat(pl.dir, pl.name, flags&^(unix.O_CREAT|unix.O_EXCL)|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return failed(err)
	}
	return c.opened(t, fd, flags, false, cloexec, pl)
}

// stageNew makes the placeholder of a new protected file and mounts a
// staged file over it.
func (c *creator) stageNew(pl place, dir string, mode uint32) answer {
	if c.sess.Full() {
		return c.refuse(dir, pl.name, "too many new protected entries", unix.EPERM)
	}
	// A socket node, which no one can open: a descriptor the command
	// takes before the staged file covers it writes nothing to the host.
	if err := unix.Mknodat(pl.dir, pl.name, unix.S_IFSOCK|mode, 0); err != nil {
		return failed(err)
	}
	var st unix.Stat_t
	unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	undo := func(why error) answer {
		unix.Unlinkat(pl.dir, pl.name, 0)
		return c.refuse(dir, pl.name, fmt.Sprintf("could not be staged (%v)", why), unix.EPERM)
	}
	ph, err := unix.Openat(pl.dir, pl.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return undo(err)
	}
	content, err := c.stagedFile(ph, st.Mode&0o7777)
	if err != nil || !c.sess.Staged(ph, content, false) {
		unix.Close(ph)
		if content >= 0 {
			unix.Close(content)
		}
		return undo(err)
	}
	return done
}

// stagedFile makes a file in the guard's staging tmpfs and mounts it on
// the placeholder ph. It returns the file, open for reading.
func (c *creator) stagedFile(ph int, perm uint32) (int, error) {
	tmpfs := c.sess.StagingTmpfs()
	if tmpfs < 0 {
		return -1, unix.ENOENT
	}
	c.nfiles++
	name := "new-" + strconv.Itoa(c.nfiles)
	f, err := unix.Openat(tmpfs, name, unix.O_CREAT|unix.O_EXCL|unix.O_RDONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return -1, err
	}
	unix.Fchmod(f, perm)
	err = mounting(func() error {
		return retry(func() error {
			tree, err := unix.OpenTree(tmpfs, name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
			if err != nil {
				return err
			}
			defer unix.Close(tree)
			return unix.MoveMount(tree, "", ph, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
		})
	})
	if err != nil {
		unix.Close(f)
		unix.Unlinkat(tmpfs, name, 0)
		return -1, err
	}
	return f, nil
}
