package ladder

import (
	"os"
	"sync"

	"github.com/corralhq/corral/limits"
)

var (
	cgroupOnce sync.Once
	cgroupDir  *limits.Hierarchy
	noCgroup   string
)

// probeCgroup finds, once per process, the cgroup v2 subtree sandboxes'
// cgroups can be made in, or says why there is none.
func probeCgroup() (*limits.Hierarchy, string) {
	cgroupOnce.Do(func() {
		cgroupDir, noCgroup = findCgroup()
	})
	return cgroupDir, noCgroup
}

func findCgroup() (*limits.Hierarchy, string) {
	const why = "no writable cgroup v2 subtree: "
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, why + err.Error()
	}
	defer mi.Close()
	root, ok := limits.MountPoint(mi)
	if !ok {
		return nil, why + "no cgroup v2 hierarchy is mounted"
	}
	cg, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, why + err.Error()
	}
	defer cg.Close()
	self, ok := limits.SelfPath(cg)
	if !ok {
		return nil, why + "this process is in no cgroup v2 cgroup"
	}
	h, err := limits.FindHierarchy(root, self)
	if err != nil {
		return nil, why + err.Error()
	}
	return h, ""
}

// LimitHostOf is what the host offers for the limits of set on rung. The
// cgroup subtree is looked for (once per process) only when set needs one,
// or always: a cgroup limit the rlimits cannot stand in for.
func LimitHostOf(rung Rung, set limits.Set, always bool) LimitHost {
	h := LimitHost{Rung: rung, Root: os.Geteuid() == 0, NoCgroup: "no cgroup v2 subtree was looked for"}
	if always || NeedsCgroup(set, h) {
		h.Cgroup, h.NoCgroup = probeCgroup()
	}
	return h
}

// NeedsCgroup reports whether set has a limit that only a cgroup enforces
// on h (CPUs; pids for root or without a user namespace), or one a cgroup
// enforces better (memory, for the whole sandbox and its tmpfs pages).
func NeedsCgroup(set limits.Set, h LimitHost) bool {
	return set.Memory > 0 || set.CPUs > 0 || set.Pids > 0 && (h.Root || h.Rung != RungFull)
}
