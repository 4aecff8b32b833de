//go:build amd64 || arm64

package seccomp

import (
	"golang.org/x/sys/unix"
)

// SharedMemoryProgram is a BPF program that fails with ENOMEM the calls
// that make shared anonymous memory, which no rlimit counts (RLIMIT_DATA
// counts private memory alone): memfd_create, shmget, and mmap with
// MAP_SHARED and MAP_ANONYMOUS. It allows everything else. The init loads
// it under a memory limit that no cgroup counts shared memory for, so the
// limit bounds what the command can pin. Calls of another architecture
// are allowed here and killed by the policy's filter.
func SharedMemoryProgram() ([]unix.SockFilter, error) {
	// The low word of mmap's flags, its fourth argument (little-endian).
	const flags = 16 + 3*8
	const allow, refuse = 9, 10
	prog := []unix.SockFilter{
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),                               // 0
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, notifyArch, 1, 2, allow),               // 1
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),                                 // 2
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SYS_MEMFD_CREATE, 3, refuse, 4),   // 3
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SYS_SHMGET, 4, refuse, 5),         // 4
		jumpTo(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SYS_MMAP, 5, 6, allow),            // 5
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, flags),                                 // 6
		jumpTo(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, unix.MAP_SHARED, 7, 8, allow),         // 7
		jumpTo(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, unix.MAP_ANONYMOUS, 8, refuse, allow), // 8
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),                            // 9
		bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOMEM)),        // 10
	}
	return prog, nil
}
