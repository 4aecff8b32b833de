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

// setFilterFlags is seccomp(SECCOMP_SET_MODE_FILTER, flags, prog) on this
// thread, returning what the call returns (a listener's descriptor with
// SECCOMP_FILTER_FLAG_NEW_LISTENER).
func setFilterFlags(prog []unix.SockFilter, flags uintptr) (int, error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// notif is struct seccomp_notif: the id, the thread, flags, then
// struct seccomp_data.
type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// notifResp is struct seccomp_notif_resp.
type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// recvNotif is ioctl(SECCOMP_IOCTL_NOTIF_RECV); the structure must be
// zeroed.
func recvNotif(fd int, n *notif) error {
	*n = notif{}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(n)))
	if errno != 0 {
		return errno
	}
	return nil
}

// sendResp is ioctl(SECCOMP_IOCTL_NOTIF_SEND).
func sendResp(fd int, r *notifResp) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(r)))
	if errno != 0 {
		return errno
	}
	return nil
}

// idValid is ioctl(SECCOMP_IOCTL_NOTIF_ID_VALID).
func idValid(fd int, id uint64) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	if errno != 0 {
		return errno
	}
	return nil
}

// setNotifFlags is ioctl(SECCOMP_IOCTL_NOTIF_SET_FLAGS).
func setNotifFlags(fd int, flags uint64) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, uintptr(flags))
	if errno != 0 {
		return errno
	}
	return nil
}
