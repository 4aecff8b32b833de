//go:build !linux

package landlock

import "fmt"

// Restrict fails: Landlock is Linux only.
func Restrict(*Policy) error { return fmt.Errorf("landlock: %w", ErrUnsupported) }
