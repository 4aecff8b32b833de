//go:build linux && !amd64 && !arm64

package seccomp

// callNames is empty where no program is generated ahead: calls are named
// by number.
var callNames = map[uint32]string{}
