package seccomp

import (
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// CallName names system call nr of this architecture, when the policy
// can refuse it; otherwise "syscall N".
func CallName(nr uint32) string {
	if name, ok := callNames[nr]; ok {
		return name
	}
	return "syscall " + strconv.FormatUint(uint64(nr), 10)
}

// WhyNamed is [Why] for an errno given by its name ("EPERM").
func WhyNamed(call, errno string) string {
	for e := syscall.Errno(1); e < 4096; e++ {
		if unix.ErrnoName(e) == errno {
			return Why(call, e)
		}
	}
	return ""
}
