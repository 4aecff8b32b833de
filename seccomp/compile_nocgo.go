//go:build !(linux && cgo)

package seccomp

import (
	"fmt"
	"runtime"
)

// Compile fails: the compiler (libseccomp) needs cgo on Linux.
func Compile([]Rule) ([]byte, error) {
	return nil, fmt.Errorf("seccomp: %w: %s", ErrUnavailable, why())
}

// Available reports false and why.
func Available() (bool, string) { return false, why() }

// Version describes the filter compiler.
func Version() string { return "none" }

func why() string {
	if runtime.GOOS != "linux" {
		return "seccomp is Linux only"
	}
	return "built without cgo: the filter compiler (libseccomp) is not linked in"
}
