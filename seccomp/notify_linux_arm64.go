package seccomp

import "golang.org/x/sys/unix"

const notifyArch = unix.AUDIT_ARCH_AARCH64

// legacyWriteCalls: arm64 has only the *at forms.
var legacyWriteCalls = map[uint32]WriteCall{}
