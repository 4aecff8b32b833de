package cli

import "golang.org/x/sys/unix"

// isTerminal tells whether descriptor fd is a terminal.
func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
