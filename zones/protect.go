package zones

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/corralhq/corral/changeset"
)

// ErrProtected is wrapped by the error of a write FS refuses because it
// would make or change a protected entry in a zone (changeset.Protected:
// git's directory, an editor's or agent's configuration, a shell's
// start-up file) or a HEAD, which makes its directory a repository: FS
// writes from the calling process, outside the sandbox's guard, so a
// program on the host would run what it wrote.
var ErrProtected = errors.New("refused: protected")

// protected refuses an operation on the worker's path p that would write
// a protected entry, by the path as given or as it resolves on the host.
func (f *FS) protected(fsOp, p string) error {
	name, rel, err := Split(p)
	if err != nil || name == "" {
		return nil
	}
	z, ok := f.access.Zone(name)
	if !ok {
		return nil
	}
	for _, r := range []string{rel, realRel(z.Path, rel)} {
		if r == "" || r == "." {
			continue
		}
		entry, what := "", ""
		if pr, ok := changeset.Protected(r); ok {
			entry, what = pr.Path, pr.What
		} else if path.Base(r) == "HEAD" {
			entry, what = r, "git: a HEAD file makes its directory a repository, whose config and hooks git runs"
		}
		if entry != "" {
			return &fs.PathError{Op: fsOp, Path: p, Err: fmt.Errorf("%w: /%s/%s is protected (%s); ask the user", ErrProtected, name, entry, what)}
		}
	}
	return nil
}

// realRel is rel, a path inside the zone directory root, with the
// symlinks of its existing part resolved, relative to root's real path;
// "" when it cannot be told or lies outside.
func realRel(root, rel string) string {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return ""
	}
	p, rest := filepath.Join(root, filepath.FromSlash(rel)), ""
	for {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		dir := filepath.Dir(p)
		if dir == p {
			return ""
		}
		rest, p = filepath.Join(filepath.Base(p), rest), dir
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	out, err := filepath.Rel(realRoot, filepath.Join(real, rest))
	if err != nil || !filepath.IsLocal(out) {
		return ""
	}
	return filepath.ToSlash(out)
}

// errChanged is a path changed (a directory swapped for a symlink, say)
// between the check of a write and the write.
var errChanged = errors.New("changed while being written; nothing was written, try again")

// writeHeld writes data to rel in the zone directory r (the zone's root,
// named zone) as the check of protected entries saw it: the directory is
// opened and held, found again at its canonical path (which must be it,
// and hold no protected entry of the zone), and the file is created
// without following anything or, when it exists, must be the regular
// file the name held when looked at.
func (f *FS) writeHeld(r *os.Root, zone, rel string, data []byte, p string) error {
	dirRel, name := path.Dir(rel), path.Base(rel)
	dir, err := r.OpenRoot(dirRel)
	if err != nil {
		return fail("write", p, err)
	}
	defer dir.Close()
	held, err := dir.Stat(".")
	if err != nil {
		return fail("write", p, err)
	}
	canon, err := filepath.EvalSymlinks(filepath.Join(r.Name(), filepath.FromSlash(dirRel)))
	if err != nil {
		return fail("write", p, errChanged)
	}
	if now, err := os.Stat(canon); err != nil || !os.SameFile(held, now) {
		return fail("write", p, errChanged)
	}
	realRoot, err := filepath.EvalSymlinks(r.Name())
	if err != nil {
		return fail("write", p, err)
	}
	inZone, err := filepath.Rel(realRoot, filepath.Join(canon, name))
	if err != nil || !filepath.IsLocal(inZone) {
		return fail("write", p, errChanged)
	}
	if err := f.protected("write", "/"+zone+"/"+filepath.ToSlash(inZone)); err != nil {
		return &fs.PathError{Op: "write", Path: p, Err: errors.Unwrap(err)}
	}
	fh, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, fs.ErrExist) {
		fh, err = openExisting(dir, name)
	}
	if err != nil {
		return fail("write", p, err)
	}
	_, werr := fh.Write(data)
	if cerr := fh.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fail("write", p, werr)
	}
	return nil
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
		return nil, syscall.ELOOP
	case !before.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	}
	fh, err := dir.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if after, err := fh.Stat(); err != nil || !os.SameFile(before, after) {
		fh.Close()
		return nil, errChanged
	}
	if err := fh.Truncate(0); err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
}
