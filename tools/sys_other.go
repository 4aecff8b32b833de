//go:build !unix

package tools

import "os/exec"

const openNonblock = 0

// ownProcessGroup leaves cmd as it is: without process groups, cancellation
// kills only the command itself.
func ownProcessGroup(*exec.Cmd) {}
