package corral

import (
	"fmt"
	"syscall"
	"time"
)

// ProcessState describes a command that has exited, with the methods of
// os.ProcessState that do not depend on the process being the caller's child.
type ProcessState struct {
	pid    int
	status syscall.WaitStatus
	rusage *syscall.Rusage
}

// SysUsage returns the command's resource usage as a *syscall.Rusage, as
// measured by the sandbox's init when the command exited: the command's
// own and that of the descendants it waited for. It is nil when the
// sandbox was killed from outside before its init could report.
func (p *ProcessState) SysUsage() any {
	if p.rusage == nil {
		return nil
	}
	return p.rusage
}

// UserTime returns the command's user CPU time (see SysUsage).
func (p *ProcessState) UserTime() time.Duration {
	if p.rusage == nil {
		return 0
	}
	return time.Duration(p.rusage.Utime.Nano())
}

// SystemTime returns the command's system CPU time (see SysUsage).
func (p *ProcessState) SystemTime() time.Duration {
	if p.rusage == nil {
		return 0
	}
	return time.Duration(p.rusage.Stime.Nano())
}

// Pid returns the process id reported by Cmd.Process.
func (p *ProcessState) Pid() int { return p.pid }

// Exited reports whether the command exited on its own.
func (p *ProcessState) Exited() bool { return p.status.Exited() }

// Success reports whether the command exited with status 0.
func (p *ProcessState) Success() bool { return p.status.Exited() && p.status.ExitStatus() == 0 }

// ExitCode is the exit status, or -1 when the command was killed by a signal.
func (p *ProcessState) ExitCode() int {
	if p == nil {
		return -1
	}
	return p.status.ExitStatus()
}

// Sys returns the syscall.WaitStatus.
func (p *ProcessState) Sys() any { return p.status }

func (p *ProcessState) String() string {
	if p == nil {
		return "<nil>"
	}
	switch st := p.status; {
	case st.Exited():
		return fmt.Sprintf("exit status %d", st.ExitStatus())
	case st.Signaled():
		s := "signal: " + st.Signal().String()
		if st.CoreDump() {
			s += " (core dumped)"
		}
		return s
	default:
		return fmt.Sprintf("unknown status %#x", uint32(st))
	}
}
