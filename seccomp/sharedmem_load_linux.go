package seccomp

import (
	"os"

	"golang.org/x/sys/unix"
)

// LoadProgram installs prog, a plain filter with no listener, on the
// calling thread, as Load does a compiled one.
//
// Preconditions: must be called with the OS thread locked.
func LoadProgram(prog []unix.SockFilter) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(NO_NEW_PRIVS)", err)
	}
	if err := setFilter(prog); err != nil {
		return os.NewSyscallError("seccomp(SET_MODE_FILTER)", err)
	}
	return nil
}
