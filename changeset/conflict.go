package changeset

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// Conflict is an original that changed on the host since the changeset
// began, so that applying would overwrite someone else's work.
type Conflict struct {
	// Root is the real directory holding the original; Path is relative
	// to it, with slashes.
	Root   string `json:"root"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// RealPath is the original's path: Path inside Root.
func (c Conflict) RealPath() string { return filepath.Join(c.Root, filepath.FromSlash(c.Path)) }

// ConflictError is Apply's refusal: nothing was applied.
type ConflictError struct {
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	names := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		names[i] = Quote(c.RealPath()) + " (" + c.Reason + ")"
	}
	return fmt.Sprintf("%d original(s) changed on the host since the changeset began: %s",
		len(e.Conflicts), strings.Join(names, ", "))
}

// checker finds conflicts and changes that are in place already.
type checker struct {
	root    *deepRoot // the real directory
	upper   string
	base    baseline
	changes []Change
	created map[string]bool // directories the changes create
}

// check returns the conflicts and the paths that already hold their new
// state (from an earlier, interrupted apply, or an identical edit).
func (k *checker) check() (conflicts []Conflict, done map[string]bool, err error) {
	done = map[string]bool{}
	k.created = map[string]bool{}
	for _, ch := range k.changes {
		if ch.Type == Dir {
			k.created[ch.Path] = true
		}
	}
	for _, ch := range k.changes {
		cur, err := k.lstat(ch.Path)
		if err != nil {
			return nil, nil, err
		}
		reason, inPlace := k.judge(ch, cur)
		switch {
		case inPlace:
			done[ch.Path] = true
		case reason != "":
			conflicts = append(conflicts, Conflict{Path: ch.Path, Reason: reason})
		}
	}
	return conflicts, done, nil
}

// judge compares the original of ch as it is now (cur, nil when missing)
// with its fingerprint.
func (k *checker) judge(ch Change, cur fs.FileInfo) (reason string, inPlace bool) {
	if k.isInPlace(ch, cur) {
		return "", true
	}
	if ch.Status != Deleted && !k.parentReady(ch.Path) {
		return "its directory was removed on the host", false
	}
	f, known := k.base[ch.Path]
	switch {
	case !known && cur == nil:
		return "", false
	case !known:
		return "created on the host", false
	case cur == nil:
		return "deleted on the host", false
	case !f.unchanged(cur):
		return "changed on the host", false
	}
	return "", false
}

// isInPlace reports whether the real path already holds ch's new state.
// Directories count as in place when they exist: their permissions are set
// again at the end.
func (k *checker) isInPlace(ch Change, cur fs.FileInfo) bool {
	if ch.Status == Deleted || cur == nil {
		return ch.Status == Deleted && cur == nil
	}
	if typeOf(cur) != ch.Type {
		return false
	}
	switch ch.Type {
	case Dir:
		return true
	case Symlink:
		t, err := k.root.Readlink(ch.Path)
		return err == nil && t == ch.Target
	case File:
		if perm(cur) != applied(ch.Mode) || cur.Size() != ch.Size {
			return false
		}
		same, err := sameContent(filepath.Join(k.upper, filepath.FromSlash(ch.Path)), filepath.Join(k.root.Name(), filepath.FromSlash(ch.Path)))
		return err == nil && same
	}
	return false
}

// parentReady reports whether p's directory exists or will be created.
func (k *checker) parentReady(p string) bool {
	dir := path.Dir(p)
	if dir == "." || k.created[dir] {
		return true
	}
	fi, err := k.root.Lstat(dir)
	return err == nil && fi.IsDir()
}

func (k *checker) lstat(p string) (fs.FileInfo, error) {
	fi, err := k.root.Lstat(p)
	if err != nil && isAbsent(err) {
		return nil, nil
	}
	return fi, err
}
