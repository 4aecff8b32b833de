//go:build linux && !amd64 && !arm64

package seccomp

// notifyArch 0: no table of write calls here, and no listener.
const notifyArch = 0

var legacyWriteCalls = map[uint32]WriteCall{}
