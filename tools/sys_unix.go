//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// openNonblock is added to the flags of files opened for reading, so that
// opening a FIFO a command planted does not wait for a writer; the opened
// file is then refused as not regular.
const openNonblock = syscall.O_NONBLOCK

// ownProcessGroup puts cmd in a process group of its own and makes
// cancellation kill the whole group, so children it started go too.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
