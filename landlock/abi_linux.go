package landlock

import (
	"golang.org/x/sys/unix"
)

// erratumSignalScope is the erratum bit that says the kernel's signal
// scoping is fixed; without it ABI 6 scoping is not trusted.
const erratumSignalScope = 1 << 1

// ABI returns the running kernel's Landlock ABI version, 0 when Landlock is
// missing or disabled. A kernel whose signal scoping has a known hole
// reports 5, as go-landlock does, so rules built for it are accepted.
func ABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	abi := int(v)
	if abi >= ABIScope {
		errata, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA)
		if errno != 0 || errata&erratumSignalScope == 0 {
			abi = ABIScope - 1
		}
	}
	return abi
}

// Why explains an ABI of 0: the errno of the version query, and whether the
// boot-time LSM list names Landlock.
func Why() string {
	_, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch errno {
	case 0:
		return ""
	case unix.ENOSYS:
		return "kernel built without Landlock (landlock_create_ruleset: ENOSYS)"
	case unix.EOPNOTSUPP:
		return "Landlock disabled at boot (add landlock to the lsm= kernel parameter)"
	}
	return "landlock_create_ruleset: " + errno.Error()
}
