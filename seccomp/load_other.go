//go:build !linux

package seccomp

import "fmt"

// Load fails: seccomp is Linux only.
func Load([]byte) error { return fmt.Errorf("seccomp: %w: Linux only", ErrUnavailable) }

// KernelSupport reports that there is no seccomp here.
func KernelSupport() error { return fmt.Errorf("seccomp is Linux only") }
