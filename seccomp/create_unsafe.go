//go:build linux

package seccomp

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// notifAddfd is struct seccomp_notif_addfd.
type notifAddfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

// addFD is ioctl(SECCOMP_IOCTL_NOTIF_ADDFD); it returns the number the
// descriptor got in the stopped thread's process.
func addFD(fd int, a *notifAddfd) (int, error) {
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(a)))
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}
