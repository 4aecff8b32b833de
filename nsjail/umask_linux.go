package nsjail

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/seccomp"
)

// umasks follows the umask of the command's threads for the creator, which
// must create with it: reading it from /proc/TID/status costs more than
// the rest of a call the creator performs.
//
// A thread's umask changes only by its own umask call or one of a thread
// that shares its file-system context, and is inherited at fork. The
// listener stops every umask call (seccomp.Also.Umask) and forgets all it
// knows then, so what it keeps was read after the last umask call of any
// thread. It does not keep anything while a umask call may not have run
// yet: from the moment the call is stopped until its thread makes another
// call the listener sees, or its /proc shows the umask the call sets, or
// it is gone. What it keeps is tied to the thread through a pidfd, so a
// thread that took a dead one's number is read anew.
//
// Until the first umask call, every thread has the umask the command
// started with, which is read once: most commands never change it, and
// each process they start (a shell, git and its children) would otherwise
// cost a read of /proc.
type umasks struct {
	known   map[int]knownUmask // by thread id
	pending map[int]int        // thread id: the umask its stopped umask call sets
	// changed says a umask call was seen; until then initial, once read
	// (-1 before), is every thread's umask.
	changed bool
	initial int
	// tie says the kernel opens pidfds of threads (PIDFD_THREAD, Linux
	// 6.9): without, nothing is kept.
	tie bool
}

type knownUmask struct {
	pidfd int
	mask  int
}

// maxKnownUmasks bounds the pidfds kept; past it, all are let go.
const maxKnownUmasks = 128

// pidfdThread is PIDFD_THREAD: a pidfd of the thread, not its process.
const pidfdThread = unix.O_EXCL

func newUmasks() *umasks {
	u := &umasks{known: map[int]knownUmask{}, pending: map[int]int{}, initial: -1}
	if fd, err := unix.PidfdOpen(unix.Gettid(), pidfdThread); err == nil {
		unix.Close(fd)
		u.tie = true
	}
	return u
}

// changing is told of umask call n, before it goes on.
func (u *umasks) changing(n seccomp.Notification) {
	u.changed = true
	u.forget()
	u.pending[n.Pid] = int(n.Args[0] & 0o777)
}

// of returns thread tid's umask, tid being stopped in a call.
func (u *umasks) of(tid int) (int, bool) {
	if !u.changed {
		if u.initial < 0 {
			m, err := readUmask(tid)
			if err != nil {
				return 0, false
			}
			u.initial = m
		}
		return u.initial, true
	}
	// A thread stopped here has finished its earlier calls.
	delete(u.pending, tid)
	for p, want := range u.pending {
		if m, err := readUmask(p); err != nil || m == want {
			delete(u.pending, p)
		}
	}
	if k, ok := u.known[tid]; ok {
		if unix.PidfdSendSignal(k.pidfd, 0, nil, 0) != unix.ESRCH {
			return k.mask, true
		}
		unix.Close(k.pidfd)
		delete(u.known, tid)
	}
	m, err := readUmask(tid)
	if err != nil {
		return 0, false
	}
	if u.tie && len(u.pending) == 0 {
		if len(u.known) >= maxKnownUmasks {
			u.forget()
		}
		if fd, err := unix.PidfdOpen(tid, pidfdThread); err == nil {
			u.known[tid] = knownUmask{pidfd: fd, mask: m}
		}
	}
	return m, true
}

// forget lets go of every umask kept.
func (u *umasks) forget() {
	for tid, k := range u.known {
		unix.Close(k.pidfd)
		delete(u.known, tid)
	}
}

// readUmask reads thread tid's umask from /proc.
func readUmask(tid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0, err
	}
	_, rest, ok := strings.Cut(string(b), "\nUmask:")
	if !ok {
		return 0, unix.ENOENT
	}
	v, _, _ := strings.Cut(rest, "\n")
	m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
	if err != nil {
		return 0, err
	}
	return int(m), nil
}
