package nsjail

import (
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A directory on a created name's path may be reached through a symlink
// whose own name is protected: sub/.vscode -> nowhere, dangling when the
// command starts (below the top of a root, so the guard covers nothing
// there; at the top, the guard protects the target by name), then made by
// the command as an ordinary directory. What it creates in it would be
// .vscode/tasks.json to every program on the host that follows the link.
// So a path with symlinks on the way is followed one link at a time, and
// a symlink with a protected name leads only into a directory the guard
// covers (a mount of its own: a staged git directory or an entry bound
// read-only); through any other, creating is refused (EPERM, reported).

// maxLinks is the kernel's limit of symlinks followed in one path.
const maxLinks = 40

// walkLinks opens directory rest below base as walk does, for a path
// with symlinks on the way, following each itself.
func (t *task) walkLinks(base int, rest string) (int, syscall.Errno) {
	hops := 0
	return t.walkFrom(base, rest, &hops)
}

func (t *task) walkFrom(cur int, rest string, hops *int) (int, syscall.Errno) {
	for _, name := range strings.Split(rest, "/") {
		if name == "" || name == "." {
			continue
		}
		fd, err := unix.Openat(cur, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err.(syscall.Errno)
		}
		t.keep(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return -1, err.(syscall.Errno)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			cur = fd
			continue
		case unix.S_IFLNK:
		default:
			return -1, unix.ENOTDIR
		}
		if *hops++; *hops > maxLinks || onProc(cur) {
			return -1, unix.ELOOP // /proc's links are the init's own, or magic
		}
		next, errno := t.followDir(cur, name, hops)
		if errno != 0 {
			return -1, errno
		}
		cur = next
	}
	return cur, 0
}

// followDir resolves the symlink name in directory dir to the directory it
// leads to, refusing a link with a protected name that leads anywhere the
// guard does not cover.
func (t *task) followDir(dir int, name string, hops *int) (int, syscall.Errno) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil {
		return -1, err.(syscall.Errno)
	}
	target := string(buf[:n])
	if target == "" {
		return -1, unix.ENOENT
	}
	from := dir
	if strings.HasPrefix(target, "/") {
		from = t.c.root
	}
	to, errno := t.walkFrom(from, target, hops)
	if errno != 0 {
		return -1, errno
	}
	where := dirPath(dir)
	if prot, protected := t.c.sess.Protects(where, name); protected && !mountRoot(to) {
		t.c.sess.Refused(strings.TrimSuffix(where, "/")+"/"+name,
			"a new entry through a symlink with a protected name ("+prot+")")
		return -1, unix.EPERM
	}
	return to, 0
}

// onProc reports whether directory fd lies on a proc filesystem.
func onProc(fd int) bool {
	var sf unix.Statfs_t
	return unix.Fstatfs(fd, &sf) != nil || sf.Type == unix.PROC_SUPER_MAGIC
}

// mountRoot reports whether directory fd is the root of a mount: what the
// guard covers an entry with.
func mountRoot(fd int) bool {
	var sx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, 0, &sx) != nil {
		return false
	}
	return sx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && sx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
}
