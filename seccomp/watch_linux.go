package seccomp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A Watch is the policy's filter made into one a listener sees: the calls
// the policy refuses stop in the listener instead, which answers each with
// the policy's errno ([Fail]) and can report it; and the write-intent calls
// of [NotifyProgram] stop there too. It exists because the kernel lets only
// one filter of a thread's chain have a listener, and because a refusal
// outranks a stop in a listener across filters: a listener on top of the
// policy never sees what the policy refuses.
//
// It stays closed without its listener: a call stopped for a listener that
// is gone fails with ENOSYS, so what the policy refuses is refused still,
// with another errno. Calls the policy refuses with ENOSYS (clone3, which
// libc then makes with clone) are refused by the filter itself, as before,
// and never reach the listener: they stand for a call the kernel lacks, and
// a program that meets one falls back without failing.
type Watch struct {
	// Also are the calls its listener stops beyond the write calls.
	Also Also

	policy []unix.SockFilter

	mu sync.Mutex
	// byCall holds the policy's answer for the calls (number and
	// architecture) it gave without looking at their arguments: the write
	// calls the listener sees all the time.
	byCall map[uint64]uint32
}

// NewWatch makes a Watch of policy, a program of [Filter]. It fails on a
// program that returns anything but allow, an errno or a kill: the watch
// would not know how to keep its meaning.
func NewWatch(policy []byte) (*Watch, error) {
	prog, err := decode(policy)
	if err != nil {
		return nil, err
	}
	for i, in := range prog {
		if in.Code&0x07 != unix.BPF_RET {
			continue
		}
		if in.Code != unix.BPF_RET|unix.BPF_K {
			return nil, fmt.Errorf("seccomp: instruction %d returns a register, which a watch cannot rewrite", i)
		}
		switch in.K & unix.SECCOMP_RET_ACTION_FULL {
		case unix.SECCOMP_RET_ALLOW, unix.SECCOMP_RET_ERRNO, unix.SECCOMP_RET_KILL_PROCESS, unix.SECCOMP_RET_KILL_THREAD:
		default:
			return nil, fmt.Errorf("seccomp: instruction %d returns %#x, which a watch cannot keep", i, in.K)
		}
	}
	return &Watch{policy: prog}, nil
}

// Program is the one filter that stands for the policy and NotifyProgram
// together, to load with [LoadListener] instead of both. It is the policy
// with each refusal (but ENOSYS) made a stop in the listener and each
// allow a jump to NotifyProgram, appended: a kill stays a kill, a refusal
// reaches the listener whatever NotifyProgram would say (as the policy's
// errno outranks it), and what the policy allows NotifyProgram decides.
func (w *Watch) Program() ([]unix.SockFilter, error) {
	notify, err := notifyProgram(w.Also)
	if err != nil {
		return nil, err
	}
	return w.ProgramWith(notify)
}

// ProgramWith is Program with another notify part (CreateProgram).
func (w *Watch) ProgramWith(notify []unix.SockFilter) ([]unix.SockFilter, error) {
	n := len(w.policy)
	if n+len(notify) > unix.BPF_MAXINSNS {
		return nil, errors.New("seccomp: policy and notify program together are too long for one filter")
	}
	prog := make([]unix.SockFilter, 0, n+len(notify))
	for i, in := range w.policy {
		if in.Code == unix.BPF_RET|unix.BPF_K {
			switch {
			case in.K == unix.SECCOMP_RET_ALLOW:
				in = unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JA, K: uint32(n - i - 1)}
			case in.K&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO && in.K&unix.SECCOMP_RET_DATA != uint32(unix.ENOSYS):
				in = unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_USER_NOTIF}
			}
		}
		prog = append(prog, in)
	}
	return append(prog, notify...), nil
}

// Refuses tells whether the policy refuses the call n stands for, and
// with which errno: the listener's answer to it. The policy is run on the
// call's registers as the kernel gave them, which the command cannot
// change, so the answer is the filter's own. A policy that cannot be run
// on them refuses with EPERM: a watch fails closed.
func (w *Watch) Refuses(n Notification) (syscall.Errno, bool) {
	if w == nil {
		return 0, false
	}
	var data [dataSize]byte
	binary.NativeEndian.PutUint32(data[0:], n.Nr)
	binary.NativeEndian.PutUint32(data[4:], n.Arch)
	binary.NativeEndian.PutUint64(data[8:], n.IP)
	for i, a := range n.Args {
		binary.NativeEndian.PutUint64(data[16+8*i:], a)
	}
	key := uint64(n.Nr)<<32 | uint64(n.Arch)
	w.mu.Lock()
	ret, known := w.byCall[key]
	w.mu.Unlock()
	if !known {
		var args bool
		var err error
		ret, args, err = runLoads(w.policy, data[:])
		if err != nil {
			return unix.EPERM, true
		}
		if !args {
			w.mu.Lock()
			if w.byCall == nil {
				w.byCall = make(map[uint64]uint32)
			}
			w.byCall[key] = ret
			w.mu.Unlock()
		}
	}
	switch ret & unix.SECCOMP_RET_ACTION_FULL {
	case unix.SECCOMP_RET_ALLOW:
		return 0, false
	case unix.SECCOMP_RET_ERRNO:
		return syscall.Errno(ret & unix.SECCOMP_RET_DATA), true
	}
	// A kill the kernel would have done before any listener saw the call.
	return unix.EPERM, true
}
