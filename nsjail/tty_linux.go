package nsjail

import (
	"os"

	"golang.org/x/sys/unix"
)

// openTerminal opens a pseudo-terminal in the sandbox's own devpts (the
// host's, in a bare sandbox) and puts its command side in place of the
// command's standard input, output and error, closing those. It returns
// the other side, which goes to the caller. It runs before the layers,
// which would stand in the way of opening a device.
func openTerminal(bare bool, stdio []*os.File) (*os.File, *failure) {
	ptmx := "/dev/pts/ptmx"
	if bare {
		ptmx = "/dev/ptmx"
	}
	mfd, err := unix.Open(ptmx, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, failureOf(LayerExec, ptmx, err)
	}
	master := os.NewFile(uintptr(mfd), ptmx)
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, failureOf(LayerExec, ptmx, os.NewSyscallError("ioctl(TIOCSPTLCK)", err))
	}
	// The peer by the master itself (Linux 4.13), not by a path in
	// /dev/pts that could name another.
	sfd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(mfd), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		master.Close()
		return nil, failureOf(LayerExec, ptmx, os.NewSyscallError("ioctl(TIOCGPTPEER)", errno))
	}
	slave := os.NewFile(sfd, "pty")
	for i := range 3 {
		stdio[i].Close()
		stdio[i] = slave
	}
	return master, nil
}
