package nsjail

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/guard"
	"github.com/corralhq/corral/seccomp"
)

// creator performs, in the init, the calls by which a command could give a
// protected name to something in a writable root (seccomp.CreateCalls), so
// that a protected entry the command creates never reaches the host while
// it runs: it is made there as an empty placeholder, with a tmpfs of the
// init's mounted over it in the sandbox, and put on the host by the guard
// once the command is gone (guard.Session.Staged).
//
// Deciding in a listener and letting the call go on would not do: the
// kernel reads the name again from the command's memory, which another of
// its threads may change in between. So the creator reads the names once,
// resolves the directory the way the kernel would (from the thread's own
// working directory or descriptor, following symlinks but no /proc magic
// link but its own, which stand for the command's), decides on that
// directory's descriptor and the last name, and performs the call there
// itself, answering with its result (a descriptor through
// SECCOMP_IOCTL_NOTIF_ADDFD).
//
// It runs on the listener's thread, which it gives the command's
// permissions: no effective capability (raised for the mount alone), the
// thread's umask set to the command's for each call. That thread is not in
// the command's Landlock domain; on the full rung the mount tree already
// refuses every name Landlock would, and the creator refuses itself what
// Landlock alone keeps from the command among existing files: device nodes
// beyond the few granted, files of /proc, and reopening through
// /proc/PID/fd a descriptor with more access than it has.
type creator struct {
	sess     *guard.Session
	listener int
	root     int // "/", O_PATH
	landlock bool
	nfiles   int // staged files made so far
	// noSockets: Landlock grants the command no socket file (see
	// Landlock.NoSockets), which the creator answers for it.
	noSockets bool
	umasks    *umasks
	procDevs  map[uint64]bool // by device number: a /proc file system
	umask     int             // the listener thread's umask; -1 before the first call
	// writable are the paths Landlock lets the command write in: a lazy
	// guard's creator makes names and writes files nowhere else, whatever
	// the mount tree allows (a mount the host made since).
	writable []string
	// plain are directories (device and inode) guarded found to hold
	// nothing of the guard's, inside the writable paths: the next call
	// there costs no look (see forgetPlain).
	plain map[[2]uint64]bool
	// writableMounts are the mount ids of the writable paths, for a
	// directory too deep to name (see writableMount).
	writableMounts map[uint64]bool
}

// createsNames reports whether the guard stages what a command creates:
// a namespaced sandbox whose guard can stage, on a kernel that can resolve
// a path without magic links (openat2, Linux 5.6).
func createsNames(s *setup, planted *guard.Session) bool {
	return !s.Bare && planted.Stages() && canResolve()
}

// canResolve reports whether the kernel resolves a path without magic
// links (openat2, Linux 5.6), which the creator needs.
func canResolve() bool {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &how)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// listens reports whether the command runs with a listener in the init:
// for a report of what the sandbox refuses it, or to stage the protected
// entries it creates.
func listens(s *setup, planted *guard.Session, report bool) bool {
	return report || createsNames(s, planted)
}

// watchProgram is the filter the listener serves: the policy with every
// write call stopped for a report, or with the calls that create names
// alone.
func watchProgram(w *seccomp.Watch, report, lazy bool) ([]unix.SockFilter, error) {
	if report {
		return w.Program()
	}
	program := seccomp.CreateProgram
	if lazy {
		program = seccomp.GuardProgram
	}
	notify, err := program(w.Also)
	if err != nil {
		return nil, err
	}
	return w.ProgramWith(notify)
}

// newCreator makes the creator of a listener yet to be loaded (its
// descriptor is set once loaded): what it opens here, the filter would
// stop.
func newCreator(s *setup, planted *guard.Session) *creator {
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	writable := slices.Concat(s.Paths.Writable, []string{"/tmp", "/dev/shm"})
	for _, l := range s.Paths.Layered {
		writable = append(writable, l.Path)
	}
	return &creator{sess: planted, listener: -1, root: root, landlock: s.Landlock != nil, writable: writable,
		plain:     map[[2]uint64]bool{},
		noSockets: s.Landlock != nil && s.Landlock.NoSockets,
		umasks:    newUmasks(), umask: -1, procDevs: map[uint64]bool{}}
}

// enter gives the calling thread, the listener's, the command's
// permissions. The thread stays locked for good: its file-system context
// is its own from here on.
//
// Preconditions: must be called with the OS thread locked, on the thread
// that serves the listener.
func (c *creator) enter() bool {
	if unix.Unshare(unix.CLONE_FS) != nil {
		return false
	}
	return setEffective(0) == nil
}

// setEffective sets the calling thread's effective capabilities, keeping
// its permitted ones.
func setEffective(caps uint64) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[0].Effective, data[1].Effective = uint32(caps), uint32(caps>>32)
	return unix.Capset(&hdr, &data[0])
}

// creates reports whether the creator must perform call n: a call that can
// create a name, an open only with O_CREAT in its registers (which the
// command cannot change).
func (c *creator) creates(n seccomp.Notification, call seccomp.WriteCall) bool {
	if c != nil && c.sess.Lazy() {
		// A lazy guard looks at every call that writes in a root.
		return seccomp.Guards(call, n)
	}
	if c == nil || !seccomp.CreatesNames(call.Name) {
		return false
	}
	if call.FlagsArg >= 0 {
		return n.Args[call.FlagsArg]&unix.O_CREAT != 0
	}
	return true
}

// answer is what the creator answers a call with: a descriptor, an errno,
// or a value.
type answer struct {
	file    int // -1: none
	cloexec bool
	errno   syscall.Errno
	gone    bool // the call is no longer waiting: nothing to answer
	// cont: the call goes on in the kernel, as the command (only where
	// nothing read could be swapped to gain anything: see rmdir).
	cont bool
}

func failed(err error) answer {
	if e, ok := err.(syscall.Errno); ok {
		return errnoAnswer(e)
	}
	return errnoAnswer(unix.EIO)
}

var done = answer{file: -1}

// serve performs call n and answers it. failing, when not nil, is run
// before a call that did not succeed is answered, while its thread still
// waits.
func (c *creator) serve(n seccomp.Notification, call seccomp.WriteCall, failing func()) {
	t := &task{tid: n.Pid, c: c, n: n}
	defer t.close()
	a := c.perform(t, call)
	if failing != nil && (a.errno != 0 || a.gone || a.cont) {
		failing()
	}
	switch {
	case a.gone:
	case a.cont:
		seccomp.Continue(c.listener, n.ID)
	case a.file >= 0:
		if seccomp.ReturnFile(c.listener, n.ID, a.file, a.cloexec) != nil {
			seccomp.Fail(c.listener, n.ID, unix.EIO)
		}
		unix.Close(a.file)
	case a.errno != 0:
		seccomp.Fail(c.listener, n.ID, a.errno)
	default:
		seccomp.ReturnValue(c.listener, n.ID, 0)
	}
}

func (c *creator) perform(t *task, call seccomp.WriteCall) answer {
	a := t.n.Args
	switch call.Name {
	case "rename", "renameat", "renameat2", "rmdir", "unlinkat":
		c.forgetPlain()
	}
	switch call.Name {
	case "openat2":
		// Its flags are in memory the command may change after a read:
		// libc and Go open with openat, and callers of openat2 fall back
		// to it when the kernel lacks it.
		return errnoAnswer(unix.ENOSYS)
	case "open":
		return c.open(t, unix.AT_FDCWD, a[0], a[1], a[2])
	case "creat":
		return c.open(t, unix.AT_FDCWD, a[0], unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, a[1])
	case "openat":
		return c.open(t, int32(a[0]), a[1], a[2], a[3])
	case "mkdir":
		return c.mkdir(t, unix.AT_FDCWD, a[0], a[1])
	case "mkdirat":
		return c.mkdir(t, int32(a[0]), a[1], a[2])
	case "mknod":
		return c.mknod(t, unix.AT_FDCWD, a[0], a[1], a[2])
	case "mknodat":
		return c.mknod(t, int32(a[0]), a[1], a[2], a[3])
	case "symlink":
		return c.symlink(t, a[0], unix.AT_FDCWD, a[1])
	case "symlinkat":
		return c.symlink(t, a[0], int32(a[1]), a[2])
	case "link":
		return c.link(t, unix.AT_FDCWD, a[0], unix.AT_FDCWD, a[1], 0)
	case "linkat":
		return c.link(t, int32(a[0]), a[1], int32(a[2]), a[3], int(a[4]))
	case "rename":
		return c.rename(t, unix.AT_FDCWD, a[0], unix.AT_FDCWD, a[1], 0)
	case "renameat":
		return c.rename(t, int32(a[0]), a[1], int32(a[2]), a[3], 0)
	case "renameat2":
		return c.rename(t, int32(a[0]), a[1], int32(a[2]), a[3], uint(a[4]))
	case "truncate":
		return c.truncate(t, a[0], int64(a[1]))
	case "chmod":
		return c.chmod(t, unix.AT_FDCWD, a[0], a[1], 0)
	case "fchmodat":
		return c.chmod(t, int32(a[0]), a[1], a[2], 0)
	case "fchmodat2":
		return c.chmod(t, int32(a[0]), a[1], a[2], int(a[3]))
	case "fchmod":
		return c.fchmod(t, int32(a[0]), a[1])
	case "rmdir":
		return c.rmdir(t, unix.AT_FDCWD, a[0])
	case "unlinkat":
		return c.rmdir(t, int32(a[0]), a[1])
	}
	return errnoAnswer(unix.ENOSYS)
}

// task is the thread a call came from, with what was opened for it.
type task struct {
	tid  int
	c    *creator
	n    seccomp.Notification
	tgid int
	fds  []int
}

func (t *task) keep(fd int) int {
	t.fds = append(t.fds, fd)
	return fd
}

func (t *task) close() {
	for _, fd := range t.fds {
		unix.Close(fd)
	}
}

// status reads the thread's process id.
func (t *task) status() bool {
	if t.tgid != 0 {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(t.tid) + "/status")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), "\nTgid:")
	v, _, _ := strings.Cut(rest, "\n")
	t.tgid, _ = strconv.Atoi(strings.TrimSpace(v))
	return t.tgid > 0
}

// str reads a path the call names.
func (t *task) str(addr uint64) (string, syscall.Errno) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	s, ok := readString(t.tid, addr, unix.PathMax)
	if !ok {
		return "", unix.EFAULT
	}
	return s, 0
}

// valid reports whether the call still waits, so that what was read for it
// was the thread's. Then the call may be performed.
func (t *task) valid() bool { return seccomp.Valid(t.c.listener, t.n.ID) }

// place is a directory, as a descriptor, and a name in it.
type place struct {
	dir      int
	name     string // no slash; "." or ".." for a path that ends there
	trailing bool   // the path ended with a slash
	// outside: the directory lies where Landlock lets the command write
	// nothing (see creator.writable), as guarded found.
	outside bool
}

// opName is the name as the call gave it, with a trailing slash kept.
func (p place) opName() string {
	if p.trailing && p.name != "." && p.name != ".." {
		return p.name + "/"
	}
	return p.name
}

// dirPath is where p's directory is, as the sandbox shows it.
func dirPath(fd int) string {
	s, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return ""
	}
	return s
}

// locate resolves the directory a path names its last entry in, from the
// thread's working directory or descriptor dirfd as the kernel would, and
// returns it with that entry's name.
// placeAt reads the name at addr once and locates it, relative to dirfd.
func (t *task) placeAt(dirfd int32, addr uint64) (place, syscall.Errno) {
	p, errno := t.str(addr)
	if errno != 0 {
		return place{}, errno
	}
	return t.locate(dirfd, p)
}

func (t *task) locate(dirfd int32, p string) (place, syscall.Errno) {
	return t.locateIn(func(dir string) (int, string, syscall.Errno) { return t.base(dirfd, dir) }, p)
}

// locateFrom is locate for a symlink's target, relative to the directory
// dir the link is in.
func (t *task) locateFrom(dir int, p string) (place, syscall.Errno) {
	return t.locateIn(func(d string) (int, string, syscall.Errno) {
		if strings.HasPrefix(d, "/") {
			return t.base(unix.AT_FDCWD, d)
		}
		return dir, d, 0
	}, p)
}

func (t *task) locateIn(base func(dir string) (int, string, syscall.Errno), p string) (place, syscall.Errno) {
	if p == "" {
		return place{}, unix.ENOENT
	}
	trimmed := strings.TrimRight(p, "/")
	if trimmed == "" {
		return place{dir: t.c.root, name: ".", trailing: true}, 0
	}
	var dir, name string
	if i := strings.LastIndexByte(trimmed, '/'); i < 0 {
		dir, name = ".", trimmed
	} else {
		dir, name = trimmed[:i], trimmed[i+1:]
		if dir == "" {
			dir = "/"
		}
	}
	b, rest, errno := base(dir)
	if errno != 0 {
		return place{}, errno
	}
	fd, errno := t.walk(b, rest)
	if errno != 0 {
		return place{}, errno
	}
	return place{dir: fd, name: name, trailing: len(trimmed) < len(p)}, 0
}

// walk opens directory rest below base, following symlinks but no magic
// link: only the /proc magic links of the command (see base) are taken,
// and only where a path begins with one.
func (t *task) walk(base int, rest string) (int, syscall.Errno) {
	if rest == "" || rest == "." {
		// The directory itself (the kernel, too, fails a later call with
		// ENOTDIR when it is none).
		return base, 0
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(base, rest, &how)
	if err == unix.ELOOP {
		return t.walkLinks(base, rest) // see walk_links_linux.go
	}
	if err != nil {
		return -1, err.(syscall.Errno)
	}
	return t.keep(fd), 0
}

// base returns the descriptor a path of the call starts from and the rest
// of the path below it: the root, the thread's working directory or
// dirfd, or a /proc magic link of one of the command's processes the path
// begins with (/proc/self/fd/3/x, /dev/fd/3/x).
func (t *task) base(dirfd int32, p string) (int, string, syscall.Errno) {
	if !strings.HasPrefix(p, "/") {
		link := "cwd"
		if dirfd != unix.AT_FDCWD {
			if dirfd < 0 {
				return -1, "", unix.EBADF
			}
			link = "fd/" + strconv.Itoa(int(dirfd))
		}
		fd, err := openLink(unix.AT_FDCWD, "/proc/"+strconv.Itoa(t.tid)+"/"+link)
		if err != nil {
			if err == unix.ENOENT {
				err = unix.EBADF
			}
			return -1, "", err.(syscall.Errno)
		}
		return t.keep(fd), p, 0
	}
	p, errno := t.translate(p)
	if errno != 0 {
		return -1, "", errno
	}
	if fd, rest, ok, errno := t.magic(p); ok || errno != 0 {
		return fd, rest, errno
	}
	return t.c.root, strings.TrimLeft(p, "/"), 0
}

// translate writes the names that mean the calling process (/proc/self,
// /proc/thread-self, /dev/fd, /dev/stdin...) with its ids: resolved by the
// init, they would mean the init.
func (t *task) translate(p string) (string, syscall.Errno) {
	prefix := func(name string) bool { return p == name || strings.HasPrefix(p, name+"/") }
	var with string
	switch {
	case prefix("/proc/self"):
		with = "/proc/self"
	case prefix("/proc/thread-self"):
		with = "/proc/thread-self"
	case prefix("/dev/fd"):
		with = "/dev/fd"
	case p == "/dev/stdin" || p == "/dev/stdout" || p == "/dev/stderr":
		with = p
	default:
		return p, 0
	}
	if !t.status() {
		return "", unix.ESRCH
	}
	pid := "/proc/" + strconv.Itoa(t.tgid)
	switch with {
	case "/proc/self":
		return pid + p[len(with):], 0
	case "/proc/thread-self":
		return pid + "/task/" + strconv.Itoa(t.tid) + p[len(with):], 0
	case "/dev/fd":
		return pid + "/fd" + p[len(with):], 0
	}
	return pid + "/fd/" + strconv.Itoa(slicesIndex([]string{"/dev/stdin", "/dev/stdout", "/dev/stderr"}, p)), 0
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// magic opens the /proc magic link p begins with (/proc/PID/fd/N,
// /proc/PID/cwd, /proc/PID/root, or the same under task/TID), of a process
// that is not the init, and returns it with the rest of p. The process's
// directory is opened first and checked, so the link is the process's
// that was checked, not one of a process that took its number since.
func (t *task) magic(p string) (fd int, rest string, ok bool, errno syscall.Errno) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(parts) < 3 || parts[0] != "proc" || !numeric(parts[1]) {
		return -1, "", false, 0
	}
	dir := "/proc/" + parts[1]
	i := 2
	if parts[2] == "task" && len(parts) > 4 && numeric(parts[3]) {
		dir += "/task/" + parts[3]
		i = 4
	}
	var link string
	switch {
	case parts[i] == "cwd" || parts[i] == "root":
		link = parts[i]
		i++
	case parts[i] == "fd" && len(parts) > i+1 && numeric(parts[i+1]):
		link = "fd/" + parts[i+1]
		i += 2
	default:
		return -1, "", false, 0
	}
	pd, errno := t.processDir(dir)
	if errno != 0 {
		return -1, "", true, errno
	}
	lfd, err := openLink(pd, link)
	if err != nil {
		return -1, "", true, err.(syscall.Errno)
	}
	return t.keep(lfd), strings.Join(parts[i:], "/"), true, 0
}

// processDir opens /proc/PID (or /proc/PID/task/TID) of a process that is
// not the init, whose magic links lead into the init's own descriptors.
func (t *task) processDir(dir string) (int, syscall.Errno) {
	pd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err.(syscall.Errno)
	}
	t.keep(pd)
	b := make([]byte, 1024)
	sfd, err := unix.Openat(pd, "status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err.(syscall.Errno)
	}
	n, _ := unix.Read(sfd, b)
	unix.Close(sfd)
	for _, line := range strings.Split(string(b[:max(n, 0)]), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if tg, _ := strconv.Atoi(strings.TrimSpace(v)); tg > 0 && tg != os.Getpid() {
				return pd, 0
			}
			break
		}
	}
	return -1, unix.EACCES
}

func numeric(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// asCommand sets the thread's umask to the command's for a call that
// creates with a mode.
func (t *task) asCommand() syscall.Errno {
	m, ok := t.c.umasks.of(t.tid)
	if !ok {
		return unix.ESRCH
	}
	t.c.setUmask(m)
	return 0
}

// setUmask sets the listener thread's umask, and remembers it so that the
// next call sets it only when it differs.
func (c *creator) setUmask(m int) {
	if m != c.umask {
		unix.Umask(m)
		c.umask = m
	}
}

// servesUmask lets a umask call of the command go on, and follows it.
func (c *creator) servesUmask(n seccomp.Notification) bool {
	if c == nil || n.Nr != unix.SYS_UMASK {
		return false
	}
	c.umasks.changing(n)
	seccomp.Continue(c.listener, n.ID)
	return true
}

// refuse answers a call that would create the protected entry name in dir
// in a way that cannot be staged, and records it.
func (c *creator) refuse(dir, name, how string, errno syscall.Errno) answer {
	c.sess.Refused(strings.TrimSuffix(dir, "/")+"/"+name, how)
	return errnoAnswer(errno)
}

// retry runs a mount step again while the kernel is short of mount
// namespaces for a moment: it counts each detached mount as one, and frees
// them after a grace period.
func retry(f func() error) error {
	var err error
	for i := 0; i < 50; i++ {
		if err = f(); err != unix.ENOSPC {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	return err
}

// mounting runs f with CAP_SYS_ADMIN effective on the calling thread.
func mounting(f func() error) error {
	if err := setEffective(1 << unix.CAP_SYS_ADMIN); err != nil {
		return err
	}
	defer setEffective(0)
	return f()
}

// stagingGit runs f, which mounts a git directory's stage, with every
// capability the thread may have effective: overlayfs keeps the mounter's
// credentials for the copies up and whiteouts it makes later, as a stage
// mounted when the command starts has them.
func stagingGit(f func() error) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	if err := setEffective(uint64(data[0].Permitted) | uint64(data[1].Permitted)<<32); err != nil {
		return err
	}
	defer setEffective(0)
	return f()
}

// landCreated puts what the command created under protected names on the
// host, on a thread with the init's capabilities and outside the
// command's Landlock domain (the staged content is in mounts no path rule
// reaches), before the guard holds it (guard.Session.Finish).
//
// Preconditions: the command and everything it started are gone.
func landCreated(planted *guard.Session) {
	if !planted.Created() {
		return // no thread to start
	}
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		planted.Land()
		close(done)
	}()
	<-done
}

// lockedThread runs f on a thread of its own with no effective capability,
// which ends with it: for an open that may block (a FIFO), which must not
// hold up the listener.
func lockedThread(f func(ok bool)) {
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		f(setEffective(0) == nil)
	}()
}

func failID(c *creator, id uint64, errno syscall.Errno) { seccomp.Fail(c.listener, id, errno) }

func failNow(c *creator, t *task, err error) {
	errno, ok := err.(syscall.Errno)
	if !ok {
		errno = unix.EIO
	}
	seccomp.Fail(c.listener, t.n.ID, errno)
}

func returnFile(c *creator, id uint64, fd int, cloexec bool) {
	if seccomp.ReturnFile(c.listener, id, fd, cloexec) != nil {
		seccomp.Fail(c.listener, id, unix.EIO)
	}
}
