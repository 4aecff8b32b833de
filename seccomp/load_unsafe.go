//go:build linux

package seccomp

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setFilter is seccomp(SECCOMP_SET_MODE_FILTER, 0, prog) on this thread.
func setFilter(prog []unix.SockFilter) error {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return errno
	}
	return nil
}

// actionAvailable asks the kernel whether it supports a filter return
// action.
func actionAvailable(action uint32) error {
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	if errno != 0 {
		return errno
	}
	return nil
}
