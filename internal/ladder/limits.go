package ladder

import (
	"fmt"
	"slices"

	"github.com/corralhq/corral/limits"
)

// LimitHost is what the host offers for limits: the rung the sandbox runs
// on, whether the caller is root, and the cgroup v2 subtree (or why none).
type LimitHost struct {
	Rung     Rung
	Root     bool
	Cgroup   *limits.Hierarchy
	NoCgroup string
}

// Enforces says how h enforces n (mechanism), or why it cannot (reason,
// empty when it can).
func (h LimitHost) Enforces(n limits.Name) (mechanism, reason string) {
	ok := func(m string) (string, string) { return m, "" }
	no := func(r string) (string, string) { return "", r }
	if h.Rung != RungFull && h.Rung != RungLandlock {
		return no(fmt.Sprintf("rung %s enforces no limits", h.Rung))
	}
	if h.Cgroup != nil && slices.Contains(limits.Controlled(), n) {
		return ok("cgroup v2 " + map[limits.Name]string{limits.Memory: "memory.max", limits.Pids: "pids.max", limits.CPUs: "cpu.max"}[n])
	}
	switch n {
	case limits.Memory:
		// What it leaves out, per rung, docs/layers.md says (Limits).
		const unbounded = "; not bounded: the processes together (each up to the limit), the page cache, kernel memory"
		if h.Rung != RungFull {
			return ok("RLIMIT_DATA, per process; making shared memory refused (memfd, shared anonymous mappings, System V)" + unbounded + ", /tmp")
		}
		return ok("RLIMIT_DATA, per process; making shared memory refused (memfd, shared anonymous mappings, System V); /tmp and /dev/shm: tmp-size" + unbounded)
	case limits.Pids:
		switch {
		case h.Rung != RungFull:
			return no("without a user namespace RLIMIT_NPROC counts every process of the user on the host, and " + h.NoCgroup)
		case h.Root:
			return no("the kernel exempts root from RLIMIT_NPROC, and " + h.NoCgroup)
		}
		return ok("RLIMIT_NPROC in the sandbox's user namespace, on the command's tasks alone")
	case limits.CPUs:
		return no("only a cgroup can share out CPU time, and " + h.NoCgroup)
	case limits.TmpSize:
		if h.Rung != RungFull {
			return no("rung landlock has no private /tmp: the command's temp dir is on the host's filesystem")
		}
		return ok("tmpfs size= on /tmp and /dev/shm")
	case limits.FileSize:
		return ok("RLIMIT_FSIZE")
	case limits.OpenFiles:
		return ok("RLIMIT_NOFILE, per process")
	case limits.CPUTime:
		return ok("RLIMIT_CPU, per process")
	}
	return no("unknown limit")
}
