package seccomp

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// WriteFlags are the open flags that ask to write: an open carrying none of
// them only reads and never stops in the listener.
const WriteFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC

// seccomp_data's layout: nr, arch, instruction pointer, then six 64-bit
// arguments. Flags are ints: their low 32 bits, first in memory on the
// little-endian architectures with a call table here, are what counts.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// WriteCalls are the calls NotifyProgram stops in the listener on this
// architecture, by number; nil where there is no table.
func WriteCalls() map[uint32]WriteCall {
	if notifyArch == 0 {
		return nil
	}
	m := make(map[uint32]WriteCall, len(writeCalls)+len(legacyWriteCalls))
	for nr, c := range writeCalls {
		m[nr] = c
	}
	for nr, c := range legacyWriteCalls {
		m[nr] = c
	}
	return m
}

var writeCalls = map[uint32]WriteCall{
	unix.SYS_OPENAT:    {"openat", []PathArg{{0, 1}}, 2},
	unix.SYS_OPENAT2:   {"openat2", []PathArg{{0, 1}}, -1},
	unix.SYS_MKDIRAT:   {"mkdirat", []PathArg{{0, 1}}, -1},
	unix.SYS_MKNODAT:   {"mknodat", []PathArg{{0, 1}}, -1},
	unix.SYS_UNLINKAT:  {"unlinkat", []PathArg{{0, 1}}, -1},
	unix.SYS_RENAMEAT2: {"renameat2", []PathArg{{0, 1}, {2, 3}}, -1},
	unix.SYS_LINKAT:    {"linkat", []PathArg{{2, 3}}, -1},
	unix.SYS_SYMLINKAT: {"symlinkat", []PathArg{{1, 2}}, -1},
	unix.SYS_TRUNCATE:  {"truncate", []PathArg{{-1, 0}}, -1},
	unix.SYS_FCHMODAT:  {"fchmodat", []PathArg{{0, 1}}, -1},
	unix.SYS_FCHMOD:    {"fchmod", nil, -1},
	unix.SYS_FCHOWNAT:  {"fchownat", []PathArg{{0, 1}}, -1},
	sysFchmodat2:       {"fchmodat2", []PathArg{{0, 1}}, -1},
}

// sysFchmodat2 is fchmodat2 (Linux 6.6), the same number everywhere.
const sysFchmodat2 = 452

// NotifyProgram is a BPF program that stops the calls of WriteCalls in a
// listener (SECCOMP_RET_USER_NOTIF) and allows everything else, opens only
// when their flags ask to write. It refuses nothing: loaded on top of the
// policy's filter, whose refusals take precedence, it only lets a listener
// see what the command tries to write. Calls of another architecture are
// allowed here and killed by the policy's filter.
func NotifyProgram() ([]unix.SockFilter, error) { return notifyProgram(Also{}) }

// notifyProgram is NotifyProgram stopping also what also names.
func notifyProgram(also Also) ([]unix.SockFilter, error) {
	return notifyCalls(WriteCalls(), WriteFlags, also)
}

// notifyCalls stops calls in the listener, those with a flags argument
// only when it carries one of flags (all of them with also.Reads), and
// what also names.
func notifyCalls(calls map[uint32]WriteCall, flags uint32, also Also) ([]unix.SockFilter, error) {
	if calls == nil {
		return nil, errors.New("seccomp: no table of write calls for this architecture")
	}
	var flagged, plain []uint32
	for nr, c := range calls {
		if c.FlagsArg >= 0 && !also.Reads {
			flagged = append(flagged, nr)
		} else {
			plain = append(plain, nr)
		}
	}
	plain = append(plain, also.calls()...)
	sortNrs(flagged)
	sortNrs(plain)
	// Layout: arch check, load nr, per flagged call 3 instructions, per
	// plain call 1, then ALLOW and NOTIFY.
	n := 3 + 3*len(flagged) + len(plain)
	allow, notify := n, n+1
	prog := []unix.SockFilter{
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, notifyArch, 1, 2, allow),
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
	}
	for _, nr := range flagged {
		i := len(prog)
		arg := uint32(offArgs + 8*calls[nr].FlagsArg)
		prog = append(prog,
			jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, nr, i, i+1, i+3),
			bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, arg),
			jumpTo(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, flags, i+2, notify, allow),
		)
	}
	for _, nr := range plain {
		i := len(prog)
		prog = append(prog, jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, nr, i, notify, i+1))
	}
	prog = append(prog,
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_USER_NOTIF),
	)
	if len(prog) != n+2 {
		return nil, fmt.Errorf("seccomp: notify program has %d instructions, want %d", len(prog), n+2)
	}
	return prog, nil
}

func bpfStmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

// jump is a conditional jump at index at, to index t when true and f when
// false. The program is short enough (under 64 instructions) for every
// offset to fit.
func jumpTo(code uint16, k uint32, at, t, f int) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k, Jt: uint8(t - at - 1), Jf: uint8(f - at - 1)}
}

func sortNrs(s []uint32) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// LoadListener installs prog on the calling thread, after Load, and returns
// the listener's descriptor (close-on-exec): the processes the thread
// starts stop at each call the program notifies until the descriptor's
// holder answers, and get ENOSYS for it once nobody holds it. The calling
// thread's own notified calls stop too.
//
// Preconditions: must be called with the OS thread locked, with
// no_new_privs set.
func LoadListener(prog []unix.SockFilter) (int, error) {
	// Once the listener has taken a call, only a fatal signal ends the
	// wait (Linux 5.19): a call the listener performs itself is then never
	// made twice, by a restart after a signal, nor left half answered.
	fd, err := setFilterFlags(prog, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	if err == unix.EINVAL {
		fd, err = setFilterFlags(prog, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
	}
	if err != nil {
		return -1, os.NewSyscallError("seccomp(SET_MODE_FILTER, NEW_LISTENER)", err)
	}
	// The stopped thread hands its CPU straight to the listener and back
	// (Linux 6.6): each call then costs two switches, not two wake-ups
	// through the scheduler. Older kernels take the slower path.
	setNotifFlags(fd, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	return fd, nil
}

// ListenerSupport reports why this kernel cannot let a listener see calls
// and continue them (Linux 5.5), or nil.
func ListenerSupport() error {
	if err := actionAvailable(unix.SECCOMP_RET_USER_NOTIF); err != nil {
		return fmt.Errorf("kernel cannot stop a call in a listener (needs Linux 5.0): %w", err)
	}
	// SECCOMP_USER_NOTIF_FLAG_CONTINUE has no probe of its own; it came
	// with SECCOMP_GET_NOTIF_SIZES' peers in 5.5, which the version tells.
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		var major, minor int
		fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor)
		if major < 5 || major == 5 && minor < 5 {
			return errors.New("kernel cannot let a stopped call continue (needs Linux 5.5)")
		}
	}
	return nil
}
