package seccomp

import (
	"errors"

	"golang.org/x/sys/unix"
)

// ConnectWatchProgram stops every connect in a listener and allows
// everything else: for a sandbox with a network namespace of its own,
// whose listener only looks at the address (a connection to a port of
// the sandbox's loopback where nothing listens, which the host may
// serve) and lets the call go on. Joined after the policy's program or
// the watch's with Then.
//
// Calls of another architecture are allowed here and killed by the
// policy's filter.
func ConnectWatchProgram() ([]unix.SockFilter, error) {
	if notifyArch == 0 {
		return nil, errors.New("seccomp: no connect program for this architecture")
	}
	// 0 load arch, 1 check, 2 load nr, 3 connect?, 4 allow, 5 notify.
	const allow, notify = 4, 5
	return []unix.SockFilter{
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, notifyArch, 1, 2, allow),
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysConnect, 3, notify, allow),
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_USER_NOTIF),
	}, nil
}
