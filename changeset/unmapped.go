package changeset

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Unmapped is an original that a sandbox cannot change through the
// changeset: overlayfs copies a file up to the upper directory keeping its
// owner and group, and fails with EOVERFLOW ("Value too large for defined
// data type") when the sandbox's user namespace has no id for them. An
// unprivileged user can map only its own group, so its own files of
// another group (a supplementary one, say) can be read but not changed.
type Unmapped struct {
	// Root is the real directory; Path is relative to it, with slashes.
	Root string
	Path string
	// GID is the original's group.
	GID uint32
}

// RealPath is the original's path: Path inside Root.
func (u Unmapped) RealPath() string { return filepath.Join(u.Root, filepath.FromSlash(u.Path)) }

// UnmappedGroups returns up to max originals of the user uid whose group
// mapped rejects and that have no copy in the upper directory yet (a copy
// there needs no copy-up), with the number of them in all. Originals of
// other users are left out: the user could not change them anyway.
func (c *Changeset) UnmappedGroups(uid uint32, mapped func(gid uint32) bool, max int) ([]Unmapped, int, error) {
	defer longPaths()()
	var found []Unmapped
	total := 0
	for _, r := range c.roots {
		err := walkReadable(r.Path, "", func(rel string, fi fs.FileInfo) bool {
			owner, group, ok := fileOwner(fi)
			if ok && owner == uid && !mapped(group) && !r.inUpper(rel) {
				total++
				if len(found) < max {
					found = append(found, Unmapped{Root: r.Path, Path: rel, GID: group})
				}
			}
			return true
		})
		if err != nil {
			return nil, 0, &fs.PathError{Op: "check changeset", Path: c.dir, Err: err}
		}
	}
	return found, total, nil
}

func (r Root) inUpper(rel string) bool {
	_, err := lstat(filepath.Join(r.Upper, filepath.FromSlash(rel)))
	return err == nil
}

// CopyUp puts a copy of the original u in the upper directory, as
// overlayfs would on the first change but with the group the user
// namespace lacks: the content, mode, group and modification time of a
// file, the target of a symlink, or an empty directory (its entries stay
// merged from the original). With the copy in place overlayfs copies
// nothing up, and the sandbox can change it. The directories above it that
// the upper directory lacks are made with their originals' mode and, where
// the user may give it, group.
//
// The copy is no change while it equals its original: List compares
// content. It fails, leaving nothing, when the user may not give the copy
// its group (the group is not one of the user's). The changeset must be
// locked and not mounted (see Lock).
func (c *Changeset) CopyUp(u Unmapped) error {
	defer longPaths()()
	var root *Root
	for i := range c.roots {
		if c.roots[i].Path == u.Root {
			root = &c.roots[i]
		}
	}
	if root == nil {
		return &fs.PathError{Op: "copy up", Path: u.RealPath(), Err: errors.New("not in a root of the changeset")}
	}
	parts := strings.Split(u.Path, "/")
	for i := 1; i < len(parts); i++ {
		if err := root.copyUpOne(strings.Join(parts[:i], "/"), false); err != nil {
			return err
		}
	}
	return root.copyUpOne(u.Path, true)
}

// copyUpOne copies the original rel to the upper directory unless it is
// there already. strict makes a group the user may not give an error.
func (r Root) copyUpOne(rel string, strict bool) error {
	if r.inUpper(rel) {
		return nil
	}
	lower := filepath.Join(r.Path, filepath.FromSlash(rel))
	upper := filepath.Join(r.Upper, filepath.FromSlash(rel))
	fi, err := lstat(lower)
	if err != nil {
		return err
	}
	_, gid, _ := fileOwner(fi)
	switch typeOf(fi) {
	case Dir:
		err = short(upper, func(p string) error { return os.Mkdir(p, 0o700) })
	case Symlink:
		var target string
		if target, err = readlink(lower); err == nil {
			err = short(upper, func(p string) error { return os.Symlink(target, p) })
		}
	case File:
		err = copyFileTo(lower, upper)
	default:
		return &fs.PathError{Op: "copy up", Path: lower, Err: errors.New("not a file, directory or symlink")}
	}
	if err != nil {
		return &fs.PathError{Op: "copy up", Path: lower, Err: err}
	}
	undo := func(err error) error {
		short(upper, os.Remove)
		return &fs.PathError{Op: "copy up", Path: lower, Err: err}
	}
	if err := short(upper, func(p string) error { return os.Lchown(p, -1, int(gid)) }); err != nil && strict {
		return undo(err)
	}
	if typeOf(fi) == Symlink {
		return nil
	}
	// After the group: chown clears the set-id bits.
	if err := chmod(upper, fs.FileMode(perm(fi))); err != nil {
		return undo(err)
	}
	mtime := fi.ModTime()
	return short(upper, func(p string) error { return os.Chtimes(p, mtime, mtime) })
}

// copyFileTo copies the content of the file from to a new file to.
func copyFileTo(from, to string) error {
	in, err := openFile(from)
	if err != nil {
		return err
	}
	defer in.Close()
	var out *os.File
	err = short(to, func(p string) (err error) {
		out, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		short(to, os.Remove)
	}
	return err
}
