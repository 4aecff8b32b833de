package nsjail

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"

	"golang.org/x/sys/unix"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/corralhq/corral/landlock"
	"github.com/corralhq/corral/seccomp"
)

// confine puts the last layers on the calling thread, in the order they
// must go: the init becomes non-dumpable (the command, even with ptrace
// allowed, cannot reach into it), then Landlock (every thread of the init),
// then the seccomp filter (this thread only, which the command inherits).
//
// Preconditions: must be called with the OS thread locked, after the mount
// tree is final and privileges are dropped.
//
// readable are further paths the init itself must read once confined (the
// staging area of package guard, which no granted path reaches).
//
// watch, when not nil, is offered the policy's filter to load in its own
// form, with a listener (see listen); when it loads nothing (false), the
// filter is loaded as it is.
func confine(s *setup, stdio []*os.File, readable []string, watch func(policy []byte) bool) *failure {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return failureOf(LayerPrivileges, "", os.NewSyscallError("prctl(SET_DUMPABLE)", err))
	}
	if s.Landlock != nil {
		in := landlock.Input{
			ABI:        s.Landlock.ABI,
			Entries:    append(landlockEntries(s), initOnly(s, readable)...),
			DenyTCP:    s.Landlock.DenyTCP,
			ConnectTCP: s.Landlock.ConnectTCP,
			Scope:      s.Landlock.Scope,
		}
		p, err := landlock.Build(in, landlock.OS())
		if err != nil {
			return failureOf(LayerLandlock, "", err)
		}
		p.Rules = append(p.Rules, stdioRules(stdio, p.HandledFS)...)
		if err := landlock.Restrict(p); err != nil {
			return failureOf(LayerLandlock, "", err)
		}
	}
	if len(s.Seccomp) > 0 {
		// The shield goes first: the policy's filter may refuse loading
		// another.
		if err := shield(s).Load(); err != nil {
			return failureOf(LayerSeccomp, "", err)
		}
		if watch != nil && watch(s.Seccomp) {
			return nil
		}
		if s.planting.Lazy() {
			// Nothing but the listener guards what the command writes.
			return failureOf(LayerProtect, "", errors.New("the guard's listener could not be loaded"))
		}
		if err := seccomp.Load(s.Seccomp); err != nil {
			return failureOf(LayerSeccomp, "", err)
		}
	}
	return nil
}

// shield is the filter that keeps the command off the init and, in a bare
// sandbox, off the host's other processes. A bare init is reachable by its
// pid and by the id of the thread the command is started from (see
// offLeader); a namespaced one is PID 1 of its namespace, which the kernel
// already keeps from the command's signals.
func shield(s *setup) seccomp.Shield {
	if !s.Bare {
		return seccomp.Shield{}
	}
	return seccomp.Shield{IDs: []int{unix.Getpid(), unix.Gettid()}, Host: true}
}

// initOnly grants the init paths that only it can reach (a detached mount
// it holds open). Read-write, because an entry granting no more than "/"
// would be dropped as redundant; the command has no path to them. But
// rules bind to inodes, and a clone of a writable root has the root's:
// they grant no more than the root's own entry (readWrite).
func initOnly(s *setup, paths []string) []landlock.Entry {
	var es []landlock.Entry
	for _, p := range paths {
		es = append(es, landlock.Entry{Path: p, Access: readWrite(s)})
	}
	return es
}

// readWrite is what writable paths are granted: ReadWrite, without socket
// files where the command may make no unix socket (Landlock.NoSockets).
func readWrite(s *setup) landlock.Access {
	if s.Landlock != nil && s.Landlock.NoSockets {
		return landlock.ReadWrite &^ ll.AccessFSMakeSock
	}
	return landlock.ReadWrite
}

// Device files a command may write or read, and the terminals it may open.
var (
	writableDevices = []string{"/dev/null", "/dev/zero", "/dev/full"}
	readableDevices = []string{"/dev/random", "/dev/urandom"}
	terminals       = []string{"/dev/tty"}
)

// bareCarved are the trees a bare sandbox gets nothing of, beyond what is
// granted inside them by name: the host's device nodes (other sessions'
// terminals, disks, /dev/shm) and its shared temporary directories, where
// other programs and other sandboxes keep their files.
var bareCarved = []string{"/dev", "/tmp", "/var/tmp"}

// landlockEntries derives what each path may do from the same lists the
// mount plan comes from. In a namespaced sandbox the mount tree already
// keeps read-only, protected and hidden paths from the command, so only the
// granting entries are needed and no directory is carved. A bare sandbox
// sees the host's tree: those paths are carved out, its own temp dir is
// the only one it reaches (the directory holding every sandbox's temp dir
// is carved out too), and of /dev it gets the few devices every program
// uses and its own stdio terminal.
func landlockEntries(s *setup) []landlock.Entry {
	in := s.Paths
	es := []landlock.Entry{{Path: "/", Access: landlock.ReadOnly}}
	add := func(a landlock.Access, paths ...string) {
		for _, p := range paths {
			es = append(es, landlock.Entry{Path: p, Access: a})
		}
	}
	if s.Bare {
		carved := bareCarved
		if s.TmpDir != "" {
			carved = append(slices.Clone(carved), path.Dir(s.TmpDir))
		}
		for _, p := range carved {
			// A path the caller configured keeps what it was given.
			if !slices.Contains(in.Writable, p) && !slices.Contains(in.ReadOnly, p) {
				add(landlock.None, p)
			}
		}
	}
	rw := readWrite(s)
	add(rw, in.Writable...)
	writable, readable := devices(s) // /dev/zero read-only under a memory limit
	add(landlock.Device, writable...)
	add(landlock.ReadOnly, readable...)
	add(landlock.Terminal, terminals...)
	if s.Bare {
		add(rw, s.TmpDir)
		add(landlock.ReadOnly, in.ReadOnly...)
		for _, root := range in.Writable {
			for _, name := range in.Protected {
				add(landlock.ReadOnly, path.Join(root, name))
			}
		}
		add(landlock.None, in.Hidden...)
	} else {
		for _, l := range in.Layered {
			add(rw, l.Path) // its writes land in its upper directory
		}
		add(rw, "/tmp", "/dev/shm")
		add(landlock.Terminal, "/dev/pts")
	}
	return es
}

// stdioEntries let the command reopen its own standard streams by path
// (/dev/stdout, /proc/self/fd/1) with no more than the descriptor itself
// allows: a file or terminal the caller handed it may live outside every
// granted tree, and a file opened for reading must not become writable by
// reopening it. The rule is made from the descriptor (its /proc/self/fd
// link is opened, not the name it was opened by), so a file deleted or
// renamed meanwhile is still the one granted. A descriptor opened for
// appending grants writing without truncating (`>> /dev/stdout`); that is
// no more than the descriptor allows, whose O_APPEND the command may clear.
// Directories, pipes and sockets need no rule.
//
// The rules bypass Build: a descriptor's link is no place in the tree, and
// what Build grants on /proc says nothing about the file it leads to.
func stdioRules(stdio []*os.File, handled landlock.Access) []landlock.Rule {
	var rs []landlock.Rule
	for _, f := range stdio {
		var st unix.Stat_t
		if unix.Fstat(int(f.Fd()), &st) != nil {
			continue
		}
		flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		if err != nil {
			continue
		}
		a := openModeAccess(flags)
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFCHR:
			a |= ll.AccessFSIoctlDev
		case unix.S_IFREG:
		default:
			continue
		}
		if a &= handled; a != 0 {
			rs = append(rs, landlock.Rule{Path: fmt.Sprintf("/proc/self/fd/%d", f.Fd()), Access: a})
		}
	}
	return rs
}

// openModeAccess is what a descriptor's open flags allow, as Landlock rights.
func openModeAccess(flags int) landlock.Access {
	var a landlock.Access
	mode := flags & unix.O_ACCMODE
	if mode == unix.O_RDONLY || mode == unix.O_RDWR {
		a |= ll.AccessFSReadFile
	}
	if mode == unix.O_WRONLY || mode == unix.O_RDWR {
		a |= ll.AccessFSWriteFile
		if flags&unix.O_APPEND == 0 {
			a |= ll.AccessFSTruncate
		}
	}
	return a
}
