//go:build unix

package limits

import "syscall"

// Outcome is what the init knows when the command has exited.
type Outcome struct {
	Status syscall.WaitStatus
	// MaxRSS is the largest resident size, in bytes, of the command and
	// of the descendants it waited for.
	MaxRSS int64
	// TmpFull says the private /tmp or /dev/shm was left full.
	TmpFull bool
	// TasksLeft is how many tasks of the sandbox were still running.
	TasksLeft int
	// Cgroup are the limits the sandbox's cgroup counted as hit.
	Cgroup []Name
}

// Detect says which limits of s the command hit, in the order of Names.
// Death by SIGXCPU or SIGXFSZ, directly or as a shell's 128+N, and a full
// /tmp are certain. The rest are hints, for a command that failed: the
// pids limit when the tasks left behind fill it, the memory limit when a
// process grew to half of it
// (RLIMIT_DATA counts mappings, not resident pages, and an allocator
// asking for a doubling fails with half of that resident).
func Detect(s Set, o Outcome) []Name {
	hit := map[Name]bool{}
	for _, n := range o.Cgroup {
		hit[n] = s.Has(n)
	}
	sig := signalOf(o.Status)
	hit[CPUTime] = hit[CPUTime] || s.CPUTime > 0 && sig == syscall.SIGXCPU
	hit[FileSize] = hit[FileSize] || s.FileSize > 0 && sig == syscall.SIGXFSZ
	hit[TmpSize] = hit[TmpSize] || s.TmpSize > 0 && o.TmpFull
	// The hints count only for a command that failed.
	failed := o.Status.Signaled() || o.Status.ExitStatus() != 0
	hit[Pids] = hit[Pids] || failed && s.Pids > 0 && int64(o.TasksLeft)+1 >= s.Pids
	hit[Memory] = hit[Memory] || failed && s.Memory > 0 && o.MaxRSS >= s.Memory/2
	var out []Name
	for _, n := range Names() {
		if hit[n] {
			out = append(out, n)
		}
	}
	return out
}

// signalOf is the signal that ended the command, also when a shell
// reported it as its own exit status 128+N.
func signalOf(ws syscall.WaitStatus) syscall.Signal {
	switch {
	case ws.Signaled():
		return ws.Signal()
	case ws.Exited() && ws.ExitStatus() > 128 && ws.ExitStatus() < 128+65:
		return syscall.Signal(ws.ExitStatus() - 128)
	}
	return 0
}
