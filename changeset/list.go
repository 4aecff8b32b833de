package changeset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// List returns every change, root by root in the order of Roots, sorted by
// path within each, comparing the upper directories with the real
// directories as they are now. It takes no lock: while a sandbox is running,
// the list may catch a command half-way.
func (c *Changeset) List() ([]Change, error) {
	defer longPaths()()
	all := []Change{}
	for _, r := range c.roots {
		changes, err := r.list()
		if err != nil {
			return nil, &fs.PathError{Op: "list changeset", Path: c.dir, Err: err}
		}
		all = append(all, changes...)
	}
	return all, nil
}

// ListRoot is List for the one root whose real directory is path: the
// changes waiting there, sorted by path, without walking the other roots.
func (c *Changeset) ListRoot(path string) ([]Change, error) {
	r, ok := c.root(path)
	if !ok {
		return nil, &fs.PathError{Op: "list changeset", Path: c.dir, Err: fmt.Errorf("%s is not one of its roots", Quote(path))}
	}
	defer longPaths()()
	changes, err := r.list()
	if err != nil {
		return nil, &fs.PathError{Op: "list changeset", Path: c.dir, Err: err}
	}
	return changes, nil
}

func (r Root) list() ([]Change, error) {
	if err := r.checkLower(); err != nil {
		return nil, err
	}
	w := &walker{upper: r.Upper, lower: r.Path, changes: []Change{}}
	if err := w.dir("", true, false); err != nil {
		return nil, err
	}
	slices.SortFunc(w.changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return w.changes, nil
}

// checkLower refuses a directory that is gone or replaced: compared with
// nothing, every change would look like a new file.
func (r Root) checkLower() error {
	fi, err := os.Stat(r.Path)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("its directory %s: %w", r.Path, pe.Err)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("its directory %s: not a directory", r.Path)
	}
	return nil
}

// walker compares an upper directory tree with the lower one.
type walker struct {
	upper, lower string
	changes      []Change
}

func (w *walker) upperPath(rel string) string { return filepath.Join(w.upper, filepath.FromSlash(rel)) }
func (w *walker) lowerPath(rel string) string { return filepath.Join(w.lower, filepath.FromSlash(rel)) }

// dir visits the upper directory rel. lowerDir says whether the lower path
// is a real directory (not a symlink to one) whose entries show through;
// opaque that the upper directory hides them all.
func (w *walker) dir(rel string, lowerDir, opaque bool) error {
	names, err := readDirNames(w.upperPath(rel))
	if err != nil {
		return err
	}
	kept := make(map[string]bool, len(names))
	for _, n := range names {
		kept[n] = true
		if err := w.entry(path.Join(rel, n), lowerDir); err != nil {
			return err
		}
	}
	if opaque && lowerDir {
		return w.deletedEntries(rel, kept)
	}
	return nil
}

func (w *walker) entry(rel string, lowerDir bool) error {
	u, err := lstat(w.upperPath(rel))
	if err != nil {
		return err
	}
	var l fs.FileInfo
	if lowerDir {
		if l, err = lstatMaybe(w.lowerPath(rel)); err != nil {
			return err
		}
	}
	switch {
	case isWhiteout(w.upperPath(rel), u):
		if l == nil {
			return nil // the original went away on its own
		}
		return w.deleted(rel, l)
	case u.IsDir():
		return w.upperDir(rel, u, l)
	}
	return w.leaf(rel, u, l)
}

func (w *walker) upperDir(rel string, u, l fs.FileInfo) error {
	opaque := isOpaque(w.upperPath(rel))
	lowerDir := l != nil && l.IsDir()
	var err error
	switch {
	case l == nil:
		err = w.add(rel, Added, u, nil)
	case !lowerDir, opaque:
		err = w.add(rel, Replaced, u, l)
	case perm(u) != perm(l):
		err = w.add(rel, Modified, u, l)
	}
	if err != nil {
		return err
	}
	return w.dir(rel, lowerDir, opaque)
}

func (w *walker) leaf(rel string, u, l fs.FileInfo) error {
	switch {
	case l == nil:
		return w.add(rel, Added, u, nil)
	case l.IsDir():
		if err := w.add(rel, Replaced, u, l); err != nil {
			return err
		}
		return w.deletedEntries(rel, nil)
	case typeOf(u) != typeOf(l):
		return w.add(rel, Replaced, u, l)
	}
	differ, err := w.differ(rel, u, l)
	if err != nil || !differ {
		return err
	}
	return w.add(rel, Modified, u, l)
}

// deleted records the original rel, and everything beneath it, as deleted.
func (w *walker) deleted(rel string, l fs.FileInfo) error {
	if err := w.add(rel, Deleted, nil, l); err != nil {
		return err
	}
	if l.IsDir() {
		return w.deletedEntries(rel, nil)
	}
	return nil
}

// deletedEntries records the entries of the lower directory rel that are
// not in kept as deleted.
func (w *walker) deletedEntries(rel string, kept map[string]bool) error {
	names, err := readDirNames(w.lowerPath(rel))
	if err != nil {
		return err
	}
	for _, n := range names {
		if kept[n] {
			continue
		}
		child := path.Join(rel, n)
		l, err := lstat(w.lowerPath(child))
		if err != nil {
			return err
		}
		if err := w.deleted(child, l); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) add(rel string, s Status, u, l fs.FileInfo) error {
	ch := Change{Root: w.lower, Path: rel, Status: s}
	if u != nil {
		ch.Type, ch.Mode = typeOf(u), perm(u)
		if ch.Type != Dir {
			ch.Size = u.Size()
		}
		if ch.Type == Symlink {
			ch.Target, _ = readlink(w.upperPath(rel))
		}
		if ch.Type == File {
			c, err := readContent(w.upperPath(rel))
			if err != nil {
				return err
			}
			ch.Binary, ch.Unprintable = c.Binary, c.Unprintable
		}
	}
	if l != nil {
		ch.OldType, ch.OldMode = typeOf(l), perm(l)
		if ch.OldType != Dir {
			ch.OldSize = l.Size()
		}
	}
	w.changes = append(w.changes, ch)
	return nil
}

// differ compares an upper entry with the original of the same type.
func (w *walker) differ(rel string, u, l fs.FileInfo) (bool, error) {
	if perm(u) != perm(l) {
		return true, nil
	}
	switch typeOf(u) {
	case Symlink:
		ut, err := readlink(w.upperPath(rel))
		if err != nil {
			return false, err
		}
		lt, err := readlink(w.lowerPath(rel))
		return ut != lt, err
	case File:
		if u.Size() != l.Size() {
			return true, nil
		}
		same, err := sameContent(w.upperPath(rel), w.lowerPath(rel))
		return !same, err
	}
	return false, nil
}

// sameContent compares two files of equal size.
func sameContent(a, b string) (bool, error) {
	fa, err := openFile(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := openFile(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 32<<10), make([]byte, 32<<10)
	for {
		na, erra := io.ReadFull(fa, ba)
		nb, errb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		// A short read is the end of both files, since the counts agree.
		if erra != nil || errb != nil {
			if err := errors.Join(realError(erra), realError(errb)); err != nil {
				return false, err
			}
			return true, nil
		}
	}
}

func realError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}
