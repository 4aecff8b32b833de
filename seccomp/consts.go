package seccomp

import "runtime"

var cloneNamespaceFlags = []struct {
	name string
	flag uint64
}{
	{"mount", cloneNewNS},
	{"cgroup", cloneNewCgroup},
	{"uts", cloneNewUTS},
	{"ipc", cloneNewIPC},
	{"user", cloneNewUser},
	{"pid", cloneNewPID},
	{"network", cloneNewNet},
}

// cloneFlagsArg is the clone argument that holds the flags: s390 swaps the
// first two.
func cloneFlagsArg() uint {
	if runtime.GOARCH == "s390x" {
		return 1
	}
	return 0
}
