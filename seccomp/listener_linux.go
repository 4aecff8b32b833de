package seccomp

import (
	"bytes"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Notification is one call stopped by a notify program, waiting for an
// answer. Its arguments are register values; what they point to lives in
// the caller's memory, which it (or another of its threads) may change at
// any time: read from there, a path is a hint about the call, never a fact.
type Notification struct {
	ID   uint64
	Pid  int // the thread, in the listener's PID namespace
	Nr   uint32
	Arch uint32 // the call's audit architecture
	IP   uint64 // the instruction pointer at the call
	Args [6]uint64
}

// Receive waits for the next call stopped at listener fd.
func Receive(fd int) (Notification, error) {
	var n notif
	for {
		err := recvNotif(fd, &n)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Notification{}, os.NewSyscallError("ioctl(SECCOMP_IOCTL_NOTIF_RECV)", err)
		}
		return Notification{ID: n.id, Pid: int(n.pid), Nr: uint32(n.nr), Arch: n.arch, IP: n.ip, Args: n.args}, nil
	}
}

// Continue lets the stopped call go on as if no filter had stopped it: the
// kernel, not the listener, decides its outcome. A call whose thread died
// or was interrupted meanwhile is no error.
func Continue(fd int, id uint64) error {
	r := notifResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	err := sendResp(fd, &r)
	if err != nil && err != unix.ENOENT {
		return os.NewSyscallError("ioctl(SECCOMP_IOCTL_NOTIF_SEND)", err)
	}
	return nil
}

// Fail answers the stopped call: it fails with errno and is not made. A
// call whose thread died or was interrupted meanwhile is no error.
func Fail(fd int, id uint64, errno syscall.Errno) error {
	r := notifResp{id: id, error: -int32(errno)}
	err := sendResp(fd, &r)
	if err != nil && err != unix.ENOENT {
		return os.NewSyscallError("ioctl(SECCOMP_IOCTL_NOTIF_SEND)", err)
	}
	return nil
}

// Valid reports whether the call id still waits: memory read from its
// thread before Valid said so belonged to that thread, not to a process
// that reused its number.
func Valid(fd int, id uint64) bool { return idValid(fd, id) == nil }

// ReadString reads a NUL-terminated string of at most max bytes at addr in
// thread pid's memory. It reads page by page, so a string ending just
// before an unmapped page is still read.
func ReadString(pid int, addr uint64, max int) (string, bool) {
	bp := stringBufs.Get().(*[]byte)
	defer stringBufs.Put(bp)
	if cap(*bp) < max {
		*bp = make([]byte, max)
	}
	buf := (*bp)[:max]
	got := 0
	for got < max {
		chunk := min(max-got, pageSize-int((addr+uint64(got))%pageSize))
		local := []unix.Iovec{{Base: &buf[got]}}
		local[0].SetLen(chunk)
		remote := []unix.RemoteIovec{{Base: uintptr(addr) + uintptr(got), Len: chunk}}
		n, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err != nil || n <= 0 {
			return "", false
		}
		if i := bytes.IndexByte(buf[got:got+n], 0); i >= 0 {
			return string(buf[:got+i]), true
		}
		got += n
	}
	return "", false // longer than max: no path the kernel would take
}

// stringBufs are ReadString's buffers, a path's worth each.
var stringBufs = sync.Pool{New: func() any { b := make([]byte, unix.PathMax); return &b }}

// pageSize is the smallest page size of the architectures here; reading
// in smaller steps than the real page only costs a call more.
const pageSize = 4096

// ReadMemory fills buf from addr in thread pid's memory, and reports
// whether all of it could be read.
func ReadMemory(pid int, addr uint64, buf []byte) bool {
	if len(buf) == 0 {
		return true
	}
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	return err == nil && n == len(buf)
}
