//go:build !linux

package changeset

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Changesets are made by overlayfs, which only Linux has. Elsewhere an
// existing changeset can still be read and applied, without overlayfs's
// markers, the change time in fingerprints, or locking.

func isWhiteout(string, fs.FileInfo) bool { return false }

func isOpaque(string) bool { return false }

func setOpaque(string) error { return errors.ErrUnsupported }

func makeWhiteout(p string) error {
	return &fs.PathError{Op: "mknod", Path: p, Err: errors.ErrUnsupported}
}

func checkUserXattr(string) error { return nil }

func fileIDs(fs.FileInfo) (dev, ino uint64, ctime int64) { return 0, 0, 0 }

func lockFile(*os.File) error { return nil }

func isAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func openDirAt(int, string) (int, error) { return -1, syscall.ENAMETOOLONG }

func closeHandle(int) {}

func fileOwner(fs.FileInfo) (uid, gid uint32, ok bool) { return 0, 0, false }
