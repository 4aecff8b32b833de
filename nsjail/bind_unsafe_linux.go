package nsjail

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// bindRaw binds sock to addr, a struct sockaddr's bytes as a command gave
// them, and returns the kernel's errno or nil.
func bindRaw(sock int, addr []byte) error {
	var p unsafe.Pointer
	if len(addr) > 0 {
		p = unsafe.Pointer(&addr[0])
	}
	_, _, errno := unix.Syscall(unix.SYS_BIND, uintptr(sock), uintptr(p), uintptr(len(addr)))
	if errno != 0 {
		return errno
	}
	return nil
}
