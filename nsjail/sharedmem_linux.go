package nsjail

import (
	"fmt"
	"slices"

	"github.com/corralhq/corral/seccomp"
)

// sharedMemoryErr is why the shared memory filter could not be loaded:
// the command's first exec then fails (execLimit.atExec).
var sharedMemoryErr error

// sharedMemoryFilter loads, under a memory limit that no cgroup counts
// shared memory for, the filter that refuses what makes shared anonymous
// memory (seccomp.SharedMemoryProgram): RLIMIT_DATA does not count it, and
// a command under --memory 64M could otherwise hold gigabytes in a
// memfd or a shared mapping. The third way to make it, a shared mapping of
// /dev/zero, needs /dev/zero open for writing, which Landlock refuses then
// (devices). Loaded ahead of the policy's filter, which
// refuses loading another.
//
// Preconditions: must be called with the OS thread locked, by confine.
func sharedMemoryFilter(s *setup) {
	if !sharedMemoryBounded(s) {
		return
	}
	zeroReadOnly = true
	prog, err := seccomp.SharedMemoryProgram()
	if err == nil {
		err = seccomp.LoadProgram(prog)
	}
	if err != nil {
		sharedMemoryErr = fmt.Errorf("the filter of shared memory, which --memory needs without a cgroup: %w", err)
	}
}

// zeroReadOnly says the command may not open /dev/zero for writing (see
// devices): the init, which performs the command's opens that write where
// it guards them, refuses it as Landlock does. Set before the listener
// starts.
var zeroReadOnly bool

// sharedMemoryBounded reports whether s has a memory limit that no cgroup
// counts shared memory for: the command may then make none.
func sharedMemoryBounded(s *setup) bool {
	return s.Limits.Memory > 0 && !s.MemoryCgroup
}

// devices are the device files the command may write and those it may
// only read: under a memory limit no cgroup counts shared memory for,
// /dev/zero is read-only, as a shared mapping of it writable is shared
// anonymous memory (reading it, and private mappings, work as before).
func devices(s *setup) (writable, readable []string) {
	if !sharedMemoryBounded(s) {
		return writableDevices, readableDevices
	}
	writable = slices.DeleteFunc(slices.Clone(writableDevices), func(d string) bool { return d == "/dev/zero" })
	return writable, append(slices.Clone(readableDevices), "/dev/zero")
}
