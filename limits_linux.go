package corral

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

// limitHostOf is what the host offers for the limits of set on rung. The
// cgroup subtree is looked for only when set needs one: a cgroup limit the
// rlimits cannot stand in for.
func limitHostOf(rung Rung, set limits.Set, always bool) limitHost {
	h := limitHost{rung: rung, root: os.Geteuid() == 0, noCgroup: "no cgroup v2 subtree was looked for"}
	if always || needsCgroup(set, h) {
		h.cgroup, h.noCgroup = probeCgroup()
	}
	return h
}

// needsCgroup reports whether set has a limit that only a cgroup enforces
// on h (CPUs; pids for root or without a user namespace), or one a cgroup
// enforces better (memory, for the whole sandbox and its tmpfs pages).
func needsCgroup(set limits.Set, h limitHost) bool {
	return set.Memory > 0 || set.CPUs > 0 || set.Pids > 0 && (h.root || h.rung != RungFull)
}
