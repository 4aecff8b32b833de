//go:build linux && !amd64 && !arm64

package seccomp

import (
	"errors"

	"golang.org/x/sys/unix"
)

// SharedMemoryProgram is the filter of shared anonymous memory, which this
// architecture does not have.
func SharedMemoryProgram() ([]unix.SockFilter, error) {
	return nil, errors.New("seccomp: no shared memory filter for this architecture")
}
