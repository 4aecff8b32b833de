package changeset

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
)

// removeTree removes p and everything beneath it. Sandboxed commands leave
// directories without write or search permission, and overlayfs leaves its
// work directory at mode 0, so a first failure makes every directory
// beneath p accessible and tries again.
func removeTree(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	makeRemovable(p)
	return os.RemoveAll(p)
}

func makeRemovable(p string) {
	fi, err := lstat(p)
	if err != nil || !fi.IsDir() {
		return
	}
	chmod(p, 0o700)
	names, _ := readDirNames(p)
	for _, n := range names {
		makeRemovable(filepath.Join(p, n))
	}
}

// writeFileAtomic replaces name with data, so that readers see the old or
// the new content and never a part.
func writeFileAtomic(name string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(name), tempName())
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// tempName is a fresh name for a temporary file; it does not grow with the
// name of the file it will replace, which may be at the length limit.
func tempName() string {
	var b [8]byte
	rand.Read(b[:])
	return ".corral-tmp-" + hex.EncodeToString(b[:])
}

// lstatMaybe is os.Lstat with a missing file, or a path through a
// non-directory, reported as nil.
func lstatMaybe(p string) (fs.FileInfo, error) {
	fi, err := lstat(p)
	if err != nil && isAbsent(err) {
		return nil, nil
	}
	return fi, err
}
