package seccomp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Load installs a program made by Compile on the calling thread, which the
// processes it starts inherit. It sets no_new_privs, which loading requires
// without CAP_SYS_ADMIN. Other threads are not filtered.
//
// Preconditions: must be called with the OS thread locked.
func Load(bpf []byte) error {
	prog, err := decode(bpf)
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(NO_NEW_PRIVS)", err)
	}
	if err := setFilter(prog); err != nil {
		return os.NewSyscallError("seccomp(SET_MODE_FILTER)", err)
	}
	return nil
}

// decode splits bpf into instructions (native byte order, as libseccomp
// writes them).
func decode(bpf []byte) ([]unix.SockFilter, error) {
	n := len(bpf) / instructionSize
	if n == 0 || len(bpf)%instructionSize != 0 || n > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: program of %d bytes is not a BPF program", len(bpf))
	}
	prog := make([]unix.SockFilter, n)
	for i := range prog {
		b := bpf[i*instructionSize:]
		prog[i] = unix.SockFilter{
			Code: binary.NativeEndian.Uint16(b),
			Jt:   b[2],
			Jf:   b[3],
			K:    binary.NativeEndian.Uint32(b[4:]),
		}
	}
	return prog, nil
}

// KernelSupport reports why this kernel cannot run the filters, or nil.
func KernelSupport() error {
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); errors.Is(err, unix.EINVAL) {
		return errors.New("kernel built without seccomp (CONFIG_SECCOMP)")
	}
	if err := actionAvailable(unix.SECCOMP_RET_KILL_PROCESS); err != nil {
		return fmt.Errorf("kernel cannot kill a process from a filter (needs Linux 4.14): %w", err)
	}
	if err := actionAvailable(unix.SECCOMP_RET_ERRNO); err != nil {
		return fmt.Errorf("kernel cannot fail a call from a filter: %w", err)
	}
	return nil
}
