//go:build !(linux && cgo && libseccomp)

package seccomp

import (
	"fmt"
	"runtime"
)

// Compile fails: the compiler (libseccomp) is built in only with cgo and
// the libseccomp build tag, so that no user's build needs the C library.
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
	return "no filter was generated ahead for " + runtime.GOARCH +
		", and compiling one needs a build with cgo and -tags libseccomp (and libseccomp-dev)"
}
