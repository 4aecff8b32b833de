//go:build !(linux && cgo)

package seccomp

import (
	"fmt"
	"runtime"
)

// Compile fails: the compiler (libseccomp) needs cgo on Linux.
func Compile([]Rule) ([]byte, error) {
	return nil, fmt.Errorf("seccomp: %w: %s", ErrUnavailable, whyNoCompiler())
}

// compiler reports false and why.
func compiler() (bool, string) { return false, whyNoCompiler() }

// compilerVersion names the filter compiler.
func compilerVersion() string { return "none" }

func whyNoCompiler() string {
	if runtime.GOOS != "linux" {
		return "seccomp is Linux only"
	}
	return "built without cgo, and no filter was generated ahead for " + runtime.GOARCH
}
