package changeset

import (
	"io/fs"
	"path/filepath"
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
