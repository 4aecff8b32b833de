package limits

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// initRoom is how many tasks beyond the init's threads at the time of
// Apply the pids limit leaves for the init: the Go runtime may start a few
// more threads while the command runs.
const initRoom = 4

// Apply sets the rlimits of s on the calling process, which passes them
// to the command it starts next. withPids says that RLIMIT_NPROC counts
// only the sandbox's tasks here (see the package doc); without it the pids
// limit is left to a cgroup. A limit the process already has lower stays:
// an unprivileged process cannot raise its hard limits.
//
// The init is under these limits too from here on: it starts nothing but
// the command, and the room it keeps for its own threads is added to the
// pids limit.
//
// A memory limit here must leave the init room above what it has mapped
// already (see MemoryRoom): the Go runtime dies when it cannot map more,
// and the init, not only the command, would fail. The init sets it here
// only where it cannot set it on the command alone (ApplyMemory).
func Apply(s Set, withPids bool) error {
	type rl struct {
		res      int
		cur, max uint64
	}
	var rs []rl
	if s.Memory > 0 {
		if data := ownData(); s.Memory < data+MemoryRoom {
			return fmt.Errorf("--memory %s is too low for the sandbox's init, which the limit binds too: it has mapped %s, and needs %s more (ask for at least %s)",
				Size(s.Memory), Size(data), Size(MemoryRoom), Size((data+MemoryRoom+(1<<20)-1)&^(1<<20-1)))
		}
		rs = append(rs, rl{unix.RLIMIT_DATA, uint64(s.Memory), uint64(s.Memory)})
	}
	if s.Pids > 0 && withPids {
		n := uint64(s.Pids) + uint64(ownThreads()) + initRoom
		rs = append(rs, rl{unix.RLIMIT_NPROC, n, n})
	}
	if s.FileSize > 0 {
		rs = append(rs, rl{unix.RLIMIT_FSIZE, uint64(s.FileSize), uint64(s.FileSize)})
	}
	if s.OpenFiles > 0 {
		rs = append(rs, rl{unix.RLIMIT_NOFILE, uint64(s.OpenFiles), uint64(s.OpenFiles)})
	}
	if s.CPUTime > 0 {
		// SIGXCPU at the limit, SIGKILL a second later for a command that
		// ignores it. The init's own CPU time counts against the same
		// limit, so its hard limit leaves room for what it has used.
		hard := uint64(s.CPUTime) + 1 + ownCPUSeconds()
		rs = append(rs, rl{unix.RLIMIT_CPU, uint64(s.CPUTime), hard})
	}
	for _, r := range rs {
		var old syscall.Rlimit
		if err := syscall.Getrlimit(r.res, &old); err != nil {
			return os.NewSyscallError("getrlimit", err)
		}
		lim := syscall.Rlimit{Cur: min(r.cur, old.Max), Max: min(r.max, old.Max)}
		// syscall's Setrlimit, not unix's: for RLIMIT_NOFILE it also stops
		// the Go runtime from restoring the process's original soft limit
		// in the child it forks.
		if err := syscall.Setrlimit(r.res, &lim); err != nil {
			return os.NewSyscallError("setrlimit", err)
		}
	}
	return nil
}

// ApplyMemory sets a memory limit of memory bytes (Set.Memory) on process
// pid, as Apply would on the calling process: the sandbox's init sets it
// on the command alone, at its first exec, where it can stop the command
// before it runs (see nsjail's listener). A lower hard limit pid already
// has stays.
func ApplyMemory(pid int, memory int64) error {
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_DATA, nil, &old); err != nil {
		return os.NewSyscallError("prlimit64", err)
	}
	b := min(uint64(memory), old.Max)
	if err := unix.Prlimit(pid, unix.RLIMIT_DATA, &unix.Rlimit{Cur: b, Max: b}, nil); err != nil {
		return os.NewSyscallError("prlimit64", err)
	}
	return nil
}

// ApplyTasks sets the pids limit of pids tasks (Set.Pids) on process
// pid, the command's first process, stopped at its first exec: RLIMIT_NPROC
// counts every task of the user in the sandbox's user namespace, the init's
// threads among them, so the limit is pids more than the init has now. The
// init itself keeps its own limit: it may start threads while the command
// runs (its caller starts ahead those it will need), and each one it starts
// takes one from the command's room, never adds one. A
// lower hard limit pid already has stays.
func ApplyTasks(pid int, pids int64) error {
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NPROC, nil, &old); err != nil {
		return os.NewSyscallError("prlimit64", err)
	}
	b := min(uint64(pids)+uint64(ownThreads()), old.Max)
	if err := unix.Prlimit(pid, unix.RLIMIT_NPROC, &unix.Rlimit{Cur: b, Max: b}, nil); err != nil {
		return os.NewSyscallError("prlimit64", err)
	}
	return nil
}

// MemoryRoom is what the init keeps of a memory limit for itself, above
// what it has mapped when it applies it: far more than it maps while the
// command runs and after (a few threads' stacks, some heap).
const MemoryRoom = 64 << 20

// ownData is the calling process's private writable memory, which
// RLIMIT_DATA counts, in bytes.
func ownData() int64 {
	kb, _ := statusField("VmData:")
	return kb << 10
}

// ownThreads is how many threads the calling process has.
func ownThreads() int {
	n, ok := statusField("Threads:")
	if !ok {
		return 16
	}
	return int(n)
}

// statusField reads a number from the calling process's
// /proc/self/status.
// It reads with plain system calls: the first os.File a Go program opens
// starts the runtime's network poller, which the init needs for nothing
// else.
func statusField(name string) (int64, bool) {
	b, ok := readStatus()
	if !ok {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, name); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func readStatus() ([]byte, bool) {
	fd, err := unix.Open("/proc/self/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	var out []byte
	buf := make([]byte, 2048)
	for {
		n, err := unix.Read(fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, false
		case n == 0:
			return out, true
		}
		out = append(out, buf[:n]...)
	}
}

// ownCPUSeconds is the CPU time the calling process has used, rounded up.
func ownCPUSeconds() uint64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 1
	}
	us := ru.Utime.Sec*1e6 + ru.Utime.Usec + ru.Stime.Sec*1e6 + ru.Stime.Usec
	return uint64((us + 999_999) / 1e6)
}

// Full reports whether the filesystem at path (a tmpfs of size=) is full
// or nearly: less than a 32nd of it free. A command that ran into its
// tmp-size limit leaves it so unless it cleans up after the failure.
func Full(path string) bool {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil || st.Blocks == 0 {
		return false
	}
	return st.Bavail < st.Blocks/32+1
}

// TasksLeft counts the tasks (processes and threads) in the calling
// process's /proc other than those of pid 1, the sandbox's init: what is
// still running when the command itself has exited.
func TasksLeft() int {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == 1 {
			continue
		}
		tasks, err := os.ReadDir("/proc/" + p.Name() + "/task")
		if err != nil {
			continue // gone meanwhile
		}
		n += len(tasks)
	}
	return n
}
