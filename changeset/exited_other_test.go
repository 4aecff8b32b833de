//go:build !linux

package changeset_test

import "testing"

// waitExited is needed only by tests of Linux sandboxes.
func waitExited(t *testing.T, pid int) { t.Fatal("waitExited needs Linux") }
