package nsjail

import "golang.org/x/sys/unix"

// closeInherited closes every descriptor above stderr that this process
// inherited from whoever started it.
//
// A freshly executed process holds exactly the descriptors its parent had
// without close-on-exec: a shell's `exec 7</etc/shadow`, a directory handle
// through which hidden paths could be reached by relative name, a pipe back
// to the caller. Everything the Go runtime and corral open afterwards is
// close-on-exec, so "open without FD_CLOEXEC" names the inherited ones
// exactly; those are closed, not just marked, so that nothing in the
// sandbox can reach them through this process either. Only descriptors
// passed explicitly (the command's stdio and Cmd.ExtraFiles, over the
// socket) reach the command.
//
// Call it once the process has taken what it needs from its inherited
// descriptors (fileConn dups the socket close-on-exec and closes fd 3).
func closeInherited() {
	for _, fd := range openFds() {
		if fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
	// Belt and braces: whatever was missed (no /proc) never crosses an exec.
	unix.CloseRange(3, ^uint(0), closeRangeCloexec)
}

// closeRangeCloexec is CLOSE_RANGE_CLOEXEC (Linux 5.11), which x/sys lacks.
const closeRangeCloexec = 1 << 2
