package changeset

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// fingerprint is what an original looked like when the changeset began (see
// "Conflicts" in the package documentation).
type fingerprint struct {
	Type  Type   `json:"t"`
	Size  int64  `json:"s,omitempty"`
	Perm  uint32 `json:"p"`
	Mtime int64  `json:"m,omitempty"`
	Ctime int64  `json:"c,omitempty"`
	Ino   uint64 `json:"i,omitempty"`
}

// baseline maps slash-separated paths relative to one root to their
// fingerprints. Each root keeps its own, beside its upper directory.
type baseline map[string]fingerprint

func fingerprintOf(fi fs.FileInfo) fingerprint {
	_, ino, ctime := fileIDs(fi)
	return fingerprint{
		Type:  typeOf(fi),
		Size:  fi.Size(),
		Perm:  uint32(perm(fi)),
		Mtime: fi.ModTime().UnixNano(),
		Ctime: ctime,
		Ino:   ino,
	}
}

// unchanged reports whether an entry with fingerprint f still has it. For a
// directory only the type and permissions count: its times and size change
// with every entry added or removed, and those are checked one by one.
func (f fingerprint) unchanged(fi fs.FileInfo) bool {
	g := fingerprintOf(fi)
	if f.Type == Dir || g.Type == Dir {
		return f.Type == g.Type && f.Perm == g.Perm
	}
	return f == g
}

// recordBaseline fingerprints every entry of the tree at lower. It stays on
// lower's filesystem, as overlayfs does, and skips what it cannot read,
// which a sandboxed command cannot read either.
func recordBaseline(lower string) (baseline, error) {
	root, err := os.Lstat(lower)
	if err != nil {
		return nil, err
	}
	rootDev, _, _ := fileIDs(root)
	base := baseline{}
	err = walkReadable(lower, "", func(rel string, fi fs.FileInfo) bool {
		base[rel] = fingerprintOf(fi)
		dev, _, _ := fileIDs(fi)
		return dev == rootDev
	})
	return base, err
}

// walkReadable is walkTree over what can be read: a directory that cannot
// be listed is recorded but not entered.
func walkReadable(root, rel string, fn func(string, fs.FileInfo) bool) error {
	names, err := readDirNames(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		if rel == "" {
			return err
		}
		return nil
	}
	for _, n := range names {
		child := path.Join(rel, n)
		fi, err := lstat(filepath.Join(root, filepath.FromSlash(child)))
		if err != nil {
			continue // removed during the walk, or unreadable
		}
		if fn(child, fi) && fi.IsDir() {
			if err := walkReadable(root, child, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func relPath(root, p string) string {
	return filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
}

func (r Root) loadBaseline() (baseline, error) {
	b, err := os.ReadFile(filepath.Join(r.dir, baselineName))
	if err != nil {
		return nil, err
	}
	var base baseline
	if err := json.Unmarshal(b, &base); err != nil {
		return nil, errors.Join(errors.New(baselineName+" is damaged"), err)
	}
	return base, nil
}

func (r Root) saveBaseline(base baseline) error {
	b, err := json.Marshal(base)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(r.dir, baselineName), b)
}
