package seccomp

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The calls ConnectProgram looks at, by number on this architecture.
const (
	sysConnect  = unix.SYS_CONNECT
	sysListen   = unix.SYS_LISTEN
	sysSendto   = unix.SYS_SENDTO
	sysSendmsg  = unix.SYS_SENDMSG
	sysSendmmsg = unix.SYS_SENDMMSG
)

// IsConnect and IsListen tell what a call ConnectProgram stopped is.
func IsConnect(n Notification) bool { return n.Nr == sysConnect }
func IsListen(n Notification) bool  { return n.Nr == sysListen }

// fastOpenRefused is what sendto, sendmsg and sendmmsg with MSG_FASTOPEN
// get: EOPNOTSUPP, the kernel's own answer when TCP Fast Open is off for
// clients, which programs meet on many hosts and fall back from to
// connect.
const fastOpenRefused = unix.SECCOMP_RET_ERRNO | uint32(unix.EOPNOTSUPP)

// ConnectProgram is a BPF program for a command whose TCP connections are
// the listener's to make: it stops every connect and listen in the
// listener (a filter cannot see a socket's family, nor the address, which
// lies in memory), refuses sendto, sendmsg and sendmmsg carrying
// MSG_FASTOPEN, and allows everything else.
//
// MSG_FASTOPEN connects a TCP socket inside the send call, where no
// security module's connect hook runs: Landlock's TCP rules never see it.
// Its flag is a register, so the filter itself can refuse it.
//
// Calls of another architecture are allowed here and killed by the
// policy's filter.
func ConnectProgram() ([]unix.SockFilter, error) {
	if notifyArch == 0 {
		return nil, errors.New("seccomp: no connect program for this architecture")
	}
	// Layout: 0 load arch, 1 check, 2 load nr, 3-7 the five calls, then
	// the flag checks (BPF jumps only forward): 8-9 for sendto and
	// sendmmsg (flags in argument 3), 10-11 for sendmsg (argument 2); 12
	// allow, 13 notify, 14 refuse.
	const flags3, flags2, allow, notify, refuse = 8, 10, 12, 13, 14
	prog := []unix.SockFilter{
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, notifyArch, 1, 2, allow),
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysConnect, 3, notify, 4),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysListen, 4, notify, 5),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysSendto, 5, flags3, 6),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysSendmmsg, 6, flags3, 7),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysSendmsg, 7, flags2, allow),
		// Flags are ints: their low 32 bits are what the kernel reads.
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArgs+8*3),
		jumpTo(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, unix.MSG_FASTOPEN, 9, refuse, allow),
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArgs+8*2),
		jumpTo(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, unix.MSG_FASTOPEN, 11, refuse, allow),
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_USER_NOTIF),
		bpfStmt(unix.BPF_RET|unix.BPF_K, fastOpenRefused),
	}
	return prog, nil
}

// Then joins two programs into one: prog runs first, and every allow of
// prog goes on to next, whose answer stands. A refusal, a kill or a stop
// in a listener of prog stays prog's.
func Then(prog, next []unix.SockFilter) ([]unix.SockFilter, error) {
	n := len(prog)
	if n+len(next) > unix.BPF_MAXINSNS {
		return nil, errors.New("seccomp: the programs together are too long for one filter")
	}
	out := make([]unix.SockFilter, 0, n+len(next))
	for i, in := range prog {
		if in.Code == unix.BPF_RET|unix.BPF_K && in.K == unix.SECCOMP_RET_ALLOW {
			in = unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JA, K: uint32(n - i - 1)}
		}
		out = append(out, in)
	}
	return append(out, next...), nil
}

// Program decodes a program made by Compile or Filter, to join with
// another (see Then) before loading it.
func Program(bpf []byte) ([]unix.SockFilter, error) { return decode(bpf) }

// GetFd duplicates descriptor fd of the thread a call stopped in into
// this process (close-on-exec), through a pidfd of that very thread: a
// thread may have a descriptor table of its own. The descriptor is the
// thread's only if the call still waits afterwards (Valid), since its
// number may have been reused meanwhile.
func GetFd(listener int, n Notification, fd int) (int, error) {
	pidfd, err := unix.PidfdOpen(n.Pid, unix.PIDFD_THREAD)
	if errors.Is(err, unix.EINVAL) {
		// Before Linux 6.9 only a thread group's leader has a pidfd;
		// another thread's is its leader's, whose table a thread shares
		// unless it was cloned without CLONE_FILES.
		pidfd, err = unix.PidfdOpen(tgid(n.Pid), 0)
	}
	if err != nil {
		return -1, os.NewSyscallError("pidfd_open", err)
	}
	defer unix.Close(pidfd)
	if !Valid(listener, n.ID) {
		return -1, unix.ENOENT
	}
	dup, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		return -1, os.NewSyscallError("pidfd_getfd", err)
	}
	return dup, nil
}

// tgid is thread tid's thread group, or tid itself when it cannot be read.
func tgid(tid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return tid
	}
	_, rest, _ := strings.Cut(string(b), "\nTgid:")
	line, _, _ := strings.Cut(rest, "\n")
	if id, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
		return id
	}
	return tid
}

// Return answers the stopped call: it returns 0 when errno is 0, and
// fails with errno otherwise, without being made by the kernel. A call
// whose thread died or was interrupted meanwhile is no error.
func Return(fd int, id uint64, errno syscall.Errno) error { return Fail(fd, id, errno) }
