//go:build unix

package corral

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// extraLinks reports whether the caller could write the regular file fi
// at p through a hard link other than p: a read-only mount protects a
// path, not the inode behind it.
func extraLinks(p string, fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1 && unix.Access(p, unix.W_OK) == nil
}
