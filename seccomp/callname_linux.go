package seccomp

import "strconv"

// CallName names system call nr of this architecture, when the policy
// can refuse it; otherwise "syscall N".
func CallName(nr uint32) string {
	if name, ok := callNames[nr]; ok {
		return name
	}
	return "syscall " + strconv.FormatUint(uint64(nr), 10)
}
