//go:build unix && !linux

package cli

import "golang.org/x/sys/unix"

// isTerminal tells whether descriptor fd is a terminal.
func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TIOCGETA)
	return err == nil
}
