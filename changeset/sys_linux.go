package changeset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// overlayfs keeps its markers in trusted.overlay.* when the real root mounts
// it, and in user.overlay.* with the userxattr option, as sandboxes do.
var overlayXattrPrefixes = []string{"user.overlay.", "trusted.overlay."}

// isWhiteout reports whether the upper entry at p, described by fi, marks a
// deletion.
func isWhiteout(p string, fi fs.FileInfo) bool {
	if fi.Mode()&fs.ModeCharDevice != 0 {
		st, ok := fi.Sys().(*syscall.Stat_t)
		return ok && st.Rdev == 0
	}
	return fi.Mode().IsRegular() && fi.Size() == 0 && hasOverlayXattr(p, "whiteout", "")
}

// isOpaque reports whether the upper directory p hides the original's
// entries.
func isOpaque(p string) bool { return hasOverlayXattr(p, "opaque", "y") }

// hasOverlayXattr reports whether p has overlayfs's xattr name, with value
// want unless want is empty.
func hasOverlayXattr(p, name, want string) bool {
	buf := make([]byte, 8)
	for _, prefix := range overlayXattrPrefixes {
		var n int
		err := short(p, func(s string) (err error) { n, err = unix.Lgetxattr(s, prefix+name, buf); return err })
		if err == nil && (want == "" || string(buf[:n]) == want) {
			return true
		}
		if errors.Is(err, unix.ERANGE) && want == "" {
			return true
		}
	}
	return false
}

// setOpaque marks the upper directory p as hiding the original's entries.
func setOpaque(p string) error {
	return short(p, func(s string) error { return unix.Lsetxattr(s, "user.overlay.opaque", []byte("y"), 0) })
}

// makeWhiteout creates a whiteout at p. Linux lets any user create the 0/0
// character device.
func makeWhiteout(p string) error {
	if err := short(p, func(s string) error { return unix.Mknod(s, unix.S_IFCHR, 0) }); err != nil {
		return &fs.PathError{Op: "mknod", Path: p, Err: err}
	}
	return nil
}

// checkUserXattr fails when dir's filesystem cannot store the user.* xattrs
// overlayfs mounted in a user namespace needs for opaque directories.
func checkUserXattr(dir string) error {
	const probe = "user.corral.probe"
	if err := unix.Lsetxattr(dir, probe, []byte("1"), 0); err != nil {
		return fmt.Errorf("the filesystem of %s has no user extended attributes, which overlayfs needs: %w", dir, err)
	}
	return unix.Lremovexattr(dir, probe)
}

// fileIDs returns the device, inode and change time (ns) of fi.
func fileIDs(fi fs.FileInfo) (dev, ino uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0
	}
	return st.Dev, st.Ino, st.Ctim.Nano()
}

// lockFile takes an exclusive flock on f, or fails with ErrInUse.
func lockFile(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return ErrInUse
	}
	return err
}

// isAbsent reports whether err says a path does not exist, including when
// one of its parents is not a directory.
func isAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR)
}

// openDirAt opens the directory name relative to the handle dir (the
// working directory when dir is -1), as a handle only for further lookups.
func openDirAt(dir int, name string) (int, error) {
	if dir < 0 {
		dir = unix.AT_FDCWD
	}
	for {
		fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func closeHandle(fd int) { unix.Close(fd) }

// fileOwner returns the owner and group of fi.
func fileOwner(fi fs.FileInfo) (uid, gid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Uid, st.Gid, true
}
