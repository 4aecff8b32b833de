package nsjail

import (
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"

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
func confine(s *setup, stdio []*os.File, readable []string) *failure {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return failureOf("privileges", "", os.NewSyscallError("prctl(SET_DUMPABLE)", err))
	}
	if s.Landlock != nil {
		in := landlock.Input{
			ABI:     s.Landlock.ABI,
			Entries: landlockEntries(s, append(stdioEntries(stdio), initOnly(readable)...)),
			DenyTCP: s.Landlock.DenyTCP,
			Scope:   s.Landlock.Scope,
		}
		p, err := landlock.Build(in, landlock.OS)
		if err != nil {
			return failureOf("landlock", "", err)
		}
		if err := landlock.Restrict(p); err != nil {
			return failureOf("landlock", "", err)
		}
	}
	if len(s.Seccomp) > 0 {
		if err := seccomp.Load(s.Seccomp); err != nil {
			return failureOf("seccomp", "", err)
		}
	}
	return nil
}

// initOnly grants the init paths that only it can reach (a detached mount
// it holds open). Read-write, because an entry granting no more than "/"
// would be dropped as redundant; the command has no path to them.
func initOnly(paths []string) []landlock.Entry {
	var es []landlock.Entry
	for _, p := range paths {
		es = append(es, landlock.Entry{Path: p, Access: landlock.ReadWrite})
	}
	return es
}

// Device files a command may write, and the terminals it may open.
var (
	writableDevices = []string{"/dev/null", "/dev/zero", "/dev/full"}
	terminals       = []string{"/dev/tty"}
)

// landlockEntries derives what each path may do from the same lists the
// mount plan comes from. In a namespaced sandbox the mount tree already
// keeps read-only, protected and hidden paths from the command, so only the
// granting entries are needed and no directory is carved. A bare sandbox
// sees the host's tree: those paths are carved out, its temp dir stands in
// for /tmp, and the host's /dev/shm and /dev/pts (other sessions' terminals)
// stay out of reach.
func landlockEntries(s *setup, stdio []landlock.Entry) []landlock.Entry {
	in := s.Paths
	es := []landlock.Entry{{Path: "/", Access: landlock.ReadOnly}}
	add := func(a landlock.Access, paths ...string) {
		for _, p := range paths {
			es = append(es, landlock.Entry{Path: p, Access: a})
		}
	}
	add(landlock.ReadWrite, in.Writable...)
	add(landlock.Device, writableDevices...)
	add(landlock.Terminal, terminals...)
	if s.Bare {
		add(landlock.ReadWrite, s.TmpDir)
		add(landlock.ReadOnly, in.ReadOnly...)
		for _, root := range in.Writable {
			for _, name := range in.Protected {
				add(landlock.ReadOnly, path.Join(root, name))
			}
		}
		add(landlock.None, in.Hidden...)
	} else {
		add(landlock.ReadWrite, "/tmp", "/dev/shm")
		add(landlock.Terminal, "/dev/pts")
	}
	return append(es, stdio...)
}

// stdioEntries let the command reopen its own standard streams by path
// (/dev/stdout, /proc/self/fd/1), which it already holds open: a terminal
// or a file the caller handed it may live outside every granted tree.
// Pipes and sockets need no rule.
func stdioEntries(stdio []*os.File) []landlock.Entry {
	var es []landlock.Entry
	for _, f := range stdio {
		var st unix.Stat_t
		if unix.Fstat(int(f.Fd()), &st) != nil {
			continue
		}
		p := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFCHR:
			es = append(es, landlock.Entry{Path: p, Access: landlock.Terminal})
		case unix.S_IFREG:
			es = append(es, landlock.Entry{Path: p, Access: landlock.Device})
		}
	}
	return es
}
