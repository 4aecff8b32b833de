package nsjail

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/seccomp"
)

// A unix socket's bind makes a name in a directory, a socket file, as
// mknod(S_IFSOCK) does: at a protected name in a writable root it would
// reach the host at once, and none can be staged (a socket's file is
// bound to the socket that made it). So the creator performs every bind
// of the command too, and refuses one that would make a protected name
// (EACCES, reported).
//
// The kernel would read the address again from memory another thread can
// change, and the descriptor's number may be made to name another socket
// meanwhile: the creator takes the command's socket once (pidfd_getfd),
// copies the address once, and binds that socket to that copy itself.
// Its answer is the kernel's for the same bytes, but for where a pathname
// socket is made: that name is resolved by the creator as any other (see
// locate), and the bind made either from a directory the path's own
// resolution cannot leave, when no symlink lies on its way (bindFrom),
// with the address the command gave; or, past a symlink, relative to the
// directory the creator resolved, never again from the path, whose links
// could lead into the init's own descriptors through /proc/self/fd. Then
// the socket's address is its name alone.
//
// Where Landlock grants no socket file (Landlock.NoSockets: unix sockets
// are not allowed), it refuses any such bind by itself and no bind is
// stopped (stopsBinds): a socketpair's socket could still bind to a name.

// stopsBinds reports whether the command's binds stop in a creator: the
// guard stages names, and Landlock does not keep every socket file from
// the command already.
func stopsBinds(s *setup) bool {
	return s.Landlock == nil || !s.Landlock.NoSockets
}

// serveBind performs a bind the filter stopped (seccomp.Also.Binds), and
// reports whether n was one.
func (l *listener) serveBind(n seccomp.Notification) bool {
	if !seccomp.IsBind(n.Nr) {
		return false
	}
	if n.Pid == l.initTid || l.create == nil {
		// The init's own; or no creator (its thread could not be given
		// the command's permissions), when no other creating call is
		// performed either.
		seccomp.Continue(l.fd, n.ID)
		return true
	}
	t := &task{tid: n.Pid, c: l.create, n: n}
	defer t.close()
	switch a := l.create.bind(t); {
	case a.gone:
	case a.errno != 0:
		seccomp.Fail(l.fd, n.ID, a.errno)
	default:
		seccomp.ReturnValue(l.fd, n.ID, 0)
	}
	return true
}

// bind performs bind(fd, addr, size) for the command, with the kernel's
// errors in its order: the descriptor, then the address's size and
// memory, then the socket's own.
func (c *creator) bind(t *task) answer {
	a := t.n.Args
	sock, err := getFd(c.listener, t.n, int(int32(a[0])))
	if err != nil {
		return errnoAnswer(errnoOf(err))
	}
	defer unix.Close(sock)
	family, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return failed(errnoOf(err))
	}
	size := int(int32(a[2]))
	if size < 0 || size > sockaddrMax {
		return errnoAnswer(unix.EINVAL)
	}
	addr := make([]byte, size)
	if !readMemory(t.tid, a[1], addr) {
		return errnoAnswer(unix.EFAULT)
	}
	switch family {
	case unix.AF_UNIX:
		if p, ok := unixPath(addr); ok {
			return c.bindUnix(t, sock, addr, p)
		}
	case unix.AF_NETLINK:
		return t.bindNetlink(sock, addr)
	}
	// An address that makes no name: the kernel's answer for these bytes.
	if !t.valid() {
		return gone
	}
	return answerOf(bindRaw(sock, addr))
}

// unixPath is the path a unix socket's address names, and whether it
// names one: not an abstract name, not the bare family (an address the
// kernel chooses), and of a size the kernel takes.
func unixPath(addr []byte) (string, bool) {
	const pathAt, most = 2, 110 // offsetof(sun_path), sizeof(struct sockaddr_un)
	if len(addr) <= pathAt || len(addr) > most || binary.NativeEndian.Uint16(addr) != unix.AF_UNIX || addr[pathAt] == 0 {
		return "", false
	}
	p := addr[pathAt:]
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	return string(p), true
}

// bindUnix binds sock to path p, which addr holds, for the command.
func (c *creator) bindUnix(t *task, sock int, addr []byte, p string) answer {
	pl, errno := t.locate(unix.AT_FDCWD, p)
	if errno != 0 {
		return errnoAnswer(errno)
	}
	if errno := t.asCommand(); errno != 0 {
		return errnoAnswer(errno)
	}
	if !t.valid() {
		return gone
	}
	if a, no := c.unstageable(pl, "a socket (bind)", unix.EACCES); no {
		return a
	}
	return answerOf(c.bindAt(t, sock, addr, p, pl))
}

// bindAt binds sock to pl's name in pl's directory for the command. When
// p's directories hold no symlink and lead to pl's directory (bindFrom),
// it binds to p itself from where the command's bind would resolve it, so
// the socket carries the address the command gave; otherwise from pl's
// directory, as the thread's working directory (the listener's thread has
// a file-system context of its own), to the name alone.
func (c *creator) bindAt(t *task, sock int, addr []byte, p string, pl place) error {
	from, exact := t.bindFrom(p, pl)
	if !exact {
		from = pl.dir
		name := pl.opName()
		addr = make([]byte, 2+len(name))
		binary.NativeEndian.PutUint16(addr, unix.AF_UNIX)
		copy(addr[2:], name)
	}
	if err := unix.Fchdir(from); err != nil {
		return err
	}
	defer unix.Fchdir(c.root)
	return bindRaw(sock, addr)
}

// bindFrom returns the directory the kernel may resolve p from, as the
// command's bind would, to reach pl: pl's own for a name alone, the root
// for an absolute path, the thread's working directory for a relative
// one, when the directories on p's way hold no symlink (and so no magic
// link of /proc, which would lead into the init's own descriptors) and
// end at pl's directory. While the creator performs a call no other call
// of the command that makes a name can run (each stops here too and
// waits its turn), so no directory on the way can be swapped for a
// symlink between this check and the bind.
func (t *task) bindFrom(p string, pl place) (int, bool) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return pl.dir, true
	}
	base, rest := t.c.root, strings.TrimLeft(p[:i], "/")
	if !strings.HasPrefix(p, "/") {
		cwd, _, errno := t.base(unix.AT_FDCWD, ".")
		if errno != 0 {
			return -1, false
		}
		base, rest = cwd, p[:i]
	}
	if rest == "" {
		rest = "."
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(base, rest, &how)
	if err != nil {
		return -1, false
	}
	t.keep(fd)
	var a, b unix.Stat_t
	if unix.Fstat(fd, &a) != nil || unix.Fstat(pl.dir, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		return -1, false
	}
	return base, true
}

// bindNetlink binds a netlink socket as the command's bind would: an
// address without a port id gets the command's process id when free, as
// the kernel gives the caller's, and one it chooses otherwise.
func (t *task) bindNetlink(sock int, addr []byte) answer {
	const pidAt = 4 // struct sockaddr_nl: family, pad, pid, groups
	if !t.valid() {
		return gone
	}
	sa, _ := unix.Getsockname(sock)
	nl, ok := sa.(*unix.SockaddrNetlink)
	if len(addr) < 12 || binary.NativeEndian.Uint16(addr) != unix.AF_NETLINK ||
		binary.NativeEndian.Uint32(addr[pidAt:]) != 0 || !ok || nl.Pid != 0 || !t.status() {
		return answerOf(bindRaw(sock, addr))
	}
	own := slices.Clone(addr)
	binary.NativeEndian.PutUint32(own[pidAt:], uint32(t.tgid))
	if err := bindRaw(sock, own); err != unix.EADDRINUSE {
		return answerOf(err)
	}
	return answerOf(bindRaw(sock, addr))
}
