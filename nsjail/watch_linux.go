package nsjail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/mounts"
)

// guardMountNamespaces is the limit on mount namespaces in a guarded
// sandbox's user namespace instead of 0: the kernel counts each detached
// mount tree (open_tree, fsmount) as an anonymous mount namespace until it
// frees it after an RCU grace period, and the guard makes one per path it
// puts back, besides the sandbox's own and a spare cover for hidden files.
// The command still cannot create one: that needs CAP_SYS_ADMIN, which it
// has nowhere without a user namespace of its own (limited to 0), and
// seccomp refuses unshare, setns, clone with CLONE_NEWNS, open_tree and
// fsmount.
const guardMountNamespaces = "16\n"

// source is a file a bind shows: its path on the host and in the sandbox,
// and its identity when the sandbox was built.
type source struct {
	Path     string
	Dev, Ino uint64
}

// sources lists what each writable and read-only bind shows, right after
// the tree is built. A bind whose mount point lies on the sandbox's own
// tmpfs (a workspace under /tmp) is never detached by the host, but keeps
// showing a directory the host may have removed or renamed since: only the
// caller, which sees the host's path, can tell.
func sources(s *setup) []source {
	if s.NoGuard || s.Bare {
		return nil
	}
	var out []source
	for _, m := range s.Plan.Mounts {
		if m.Kind != mounts.Bind && m.Kind != mounts.BindReadOnly {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(m.Path, &st) == nil {
			host := m.Path
			if m.Source != "" {
				host = m.Source // a destination: the host knows it by its source
			}
			out = append(out, source{Path: host, Dev: st.Dev, Ino: st.Ino})
		}
	}
	return out
}

// discardMoved kills a sandbox built ahead, and reports so, when a path one
// of its binds showed names another file on the host now, or nothing: the
// host replaced or removed it since. A stat per bind.
func discardMoved(p *Process) bool {
	for _, src := range p.sources {
		var st unix.Stat_t
		if unix.Stat(src.Path, &st) != nil || st.Dev != src.Dev || st.Ino != src.Ino {
			p.Kill()
			p.release()
			return true
		}
	}
	return false
}

// rootGone names a workspace or writable path that no longer exists on
// the host (removed since New checked it) as what it is, rather than as a
// failed bind; nil for any other failure.
func rootGone(s *setup, err error) *failure {
	var me *mounts.Error
	if !errors.As(err, &me) || me.Kind != mounts.Bind || !errors.Is(err, unix.ENOENT) {
		return nil
	}
	layer := LayerWritablePath
	if me.Path == s.Workspace {
		layer = LayerWorkspace
	}
	return &failure{Layer: layer, Path: me.Path, Msg: "no longer exists on the host", Errno: uintptr(unix.ENOENT)}
}

// guardMounts records the binds just built, for the check when a command
// takes the sandbox and for the watch while it runs. A test build may go
// without (setup.NoGuard), to show what the guard prevents.
func guardMounts(s *setup) *failure {
	if s.NoGuard {
		return nil
	}
	g, err := mounts.NewGuard(s.Plan)
	if err != nil {
		return failureOf(LayerMount, "", err)
	}
	s.guard = g
	return openWatch()
}

// watchFd is the inotify instance of the mount watch, made while the
// sandbox is built, before any command runs in it (openWatch).
var watchFd = -1

// openWatch makes the mount watch's inotify instance. A user's instances
// are counted across user namespaces (fs.inotify.max_user_instances), so
// the watch takes its own before the command can use any, and each
// sandbox's command has a budget of its own (limitInotify): no command
// can take the one its watch needs from another sandbox. If the user's
// processes outside have used them all, the sandbox is not built, and the
// failure says so.
func openWatch() *failure {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		if err == unix.EMFILE {
			err = fmt.Errorf("inotify_init1: %w: the user's inotify instances are all in use by other processes (at most %s, sysctl fs.inotify.max_user_instances)",
				err, knobValue("/proc/sys/fs/inotify/max_user_instances"))
		} else {
			err = os.NewSyscallError("inotify_init1", err)
		}
		return failureOf(LayerMountWatch, "", err)
	}
	watchFd = fd
	return nil
}

// The inotify budget of a sandbox: what its processes may hold of their
// user's inotify instances and watches, the mount watch's own included.
// Both are counted per user across all user namespaces, a limit at each
// level: without a budget one sandbox could take all of them, and every
// other sandbox of the user (whose mount watch needs an instance) and the
// user's own programs on the host would fail. A file watcher takes one
// instance per process (webpack, tsc --watch, cargo watch); the watches
// are a quarter of the host's, a watch per directory watched.
const (
	inotifyInstances  = 16
	inotifyWatchShare = 4
)

// limitInotify sets the sandbox's inotify budget, in its user namespace's
// /proc/sys/user (see inotifyInstances). A kernel without the knobs
// (before Linux 4.9) has no budget.
func limitInotify() error {
	knobs := map[string]string{"max_inotify_instances": strconv.Itoa(inotifyInstances)}
	if w, err := strconv.Atoi(knobValue("/proc/sys/fs/inotify/max_user_watches")); err == nil && w > 0 {
		knobs["max_inotify_watches"] = strconv.Itoa(max(w/inotifyWatchShare, 1))
	}
	for name, v := range knobs {
		err := writeKnob("/proc/sys/user/"+name, []byte(v+"\n"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// knobValue is the content of the /proc file path, trimmed, or "?".
func knobValue(path string) string {
	b, err := readKnob(path)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// checkTaken fails when anything the sandbox's binds held has been replaced
// or removed on the host since it was built: each bind must still be the
// mount its path lies on. One statx per bind.
func checkTaken(s *setup) *failure {
	if s.guard == nil {
		return nil
	}
	if lost := s.guard.Lost(); len(lost) > 0 {
		return &failure{Layer: LayerStale, Path: lost[0].Path,
			Msg: lost[0].Kind.String() + ": replaced or removed on the host since the sandbox was built"}
	}
	return nil
}

// holdProtected adds the protected names and pins ProtectNow just mounted,
// and the protected entries the planting guard bound read-only.
func holdProtected(s *setup, readOnly []string) {
	if s.guard != nil {
		s.guard.HoldProtected(s.Plan, readOnly)
	}
}

// lifted is the protection the watch could not put back, reported with the
// command's exit; ended is set once the command has exited, after which
// nothing the watch finds concerns it.
var lifted struct {
	sync.Mutex
	err   error
	ended bool
}

// watchMounts keeps the sandbox's binds in place while the command runs. It
// sleeps in poll(2) on the mount table, which wakes it whenever a mount
// comes or goes in this namespace, including the kernel detaching one
// because the host replaced its path; on inotify watches (in the instance
// openWatch made) of every directory
// above the guarded paths, which wake it when a name is moved away (its
// mount goes along, with no change to the table: the path itself, or a
// directory above it) or comes back; and on the nearest existing directory
// above a path missing at the moment. Each time it mounts again whatever was lost (mounts.Guard.Restore).
// What it cannot put back, it does not leave open: every process of the
// sandbox is killed and the command's exit reports the path.
//
// It runs on a thread of its own: not the locked one that started the
// command, so it keeps the init's capabilities in its user namespace and
// stays outside the command's Landlock domain and seccomp filter.
func watchMounts(g *mounts.Guard) {
	mfd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		failClosed(os.NewSyscallError("open mountinfo", err))
		return
	}
	ifd := watchFd
	const changed = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE | unix.IN_ONLYDIR
	for _, d := range g.Ancestors() {
		unix.InotifyAddWatch(ifd, d, changed) // unreadable: the mount table still tells of a detach
	}
	fds := []unix.PollFd{{Fd: int32(mfd), Events: unix.POLLPRI}, {Fd: int32(ifd), Events: unix.POLLIN}}
	buf := make([]byte, 4096)
	watched := map[int]bool{}
	for {
		dirs, err := g.Restore()
		if err != nil {
			failClosed(err)
			return
		}
		// A directory watched only now may have gained the missing name
		// between Restore's look and the watch: look again before
		// sleeping, until no watch is new.
		fresh := false
		for _, d := range dirs {
			if wd, err := unix.InotifyAddWatch(ifd, d, changed); err == nil && !watched[wd] {
				watched[wd], fresh = true, true
			}
		}
		if fresh {
			continue
		}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				break
			}
		}
		for {
			if n, _ := unix.Read(ifd, buf); n <= 0 {
				break
			}
		}
	}
}

// failClosed kills every process in the sandbox but the init (kill(-1)
// from PID 1) and keeps err for the command's exit report.
func failClosed(err error) {
	lifted.Lock()
	defer lifted.Unlock()
	if !lifted.ended {
		lifted.err = err
		unix.Kill(-1, unix.SIGKILL)
	}
}

// liftedFailure is the failure sent with the exit report when the watch
// killed the command, or nil. The watch reports nothing after it.
//
// Preconditions: the command has exited.
func liftedFailure() *failure {
	lifted.Lock()
	defer lifted.Unlock()
	lifted.ended = true
	if lifted.err == nil {
		return nil
	}
	f := failureOf(LayerMount, "", lifted.err)
	f.Msg += " (lifted on the host and not restored: the command was killed)"
	var me *mounts.Error
	if !errors.As(lifted.err, &me) {
		f.Layer = LayerMountWatch
	}
	return f
}
