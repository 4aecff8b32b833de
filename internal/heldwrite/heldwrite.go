// Package heldwrite writes a file below an os.Root so that what its caller
// checked is what is written, though another process may swap a directory
// on the way for a symlink meanwhile: the file tools' writes on a sandbox
// and the zones' writes, both checked against the protected entries.
package heldwrite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

var (
	// ErrChanged is a path changed between the check and the write.
	ErrChanged = errors.New("changed while being written; nothing was written, try again")
	// ErrSymlink is a name that is a symbolic link, never followed.
	ErrSymlink = errors.New("is a symbolic link")
	// ErrNotRegular is a name that is no regular file.
	ErrNotRegular = errors.New("not a regular file")
)

// Write writes data to rel below root. The directory holding it is opened
// and held, then found again at its canonical path, which must be it;
// check gets the canonical path of the file and may refuse, its error
// returned as it is; the file is then created without following anything
// or, when it exists, must be the regular file the name held when looked
// at, and is truncated before the write.
func Write(root *os.Root, rel string, data []byte, check func(target string) error) error {
	rel = filepath.FromSlash(rel)
	dirRel, name := filepath.Dir(rel), filepath.Base(rel)
	dir, err := root.OpenRoot(dirRel)
	if err != nil {
		return err
	}
	defer dir.Close()
	held, err := dir.Stat(".")
	if err != nil {
		return err
	}
	canon, err := filepath.EvalSymlinks(filepath.Join(root.Name(), dirRel))
	if err != nil {
		return ErrChanged
	}
	if now, err := os.Stat(canon); err != nil || !os.SameFile(held, now) {
		return ErrChanged
	}
	if err := check(filepath.Join(canon, name)); err != nil {
		return err
	}
	fh, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|nonblock, 0o644)
	if errors.Is(err, fs.ErrExist) {
		fh, err = openExisting(dir, name)
	}
	if err != nil {
		return err
	}
	_, werr := fh.Write(data)
	if cerr := fh.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// openExisting opens the regular file name in dir for writing and
// truncates it, refusing a symlink, and a name that stopped being the file
// looked at before it was opened.
func openExisting(dir *os.Root, name string) (*os.File, error) {
	before, err := dir.Lstat(name)
	switch {
	case err != nil:
		return nil, err
	case before.Mode()&fs.ModeSymlink != 0:
		return nil, ErrSymlink
	case !before.Mode().IsRegular():
		return nil, ErrNotRegular
	}
	fh, err := dir.OpenFile(name, os.O_WRONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	if after, err := fh.Stat(); err != nil || !os.SameFile(before, after) {
		fh.Close()
		return nil, ErrChanged
	}
	if err := fh.Truncate(0); err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
}
