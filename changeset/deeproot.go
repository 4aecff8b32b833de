package changeset

import (
	"errors"
	"github.com/corralhq/corral/internal/pathtree"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"
)

// deepRoot is an os.Root whose operations cost the same at any depth. An
// os.Root resolves every name one component at a time from its top, safely
// but at a cost that grows with the depth; walking a chain of thousands of
// directories that way costs the square of its depth. deepRoot keeps the
// handles (sub-roots) of the directories on the way to the last one used,
// so that changes in path order each open at most the directories that are
// new. Every name is still resolved inside the top directory: no symlink
// leads out of it.
type deepRoot struct {
	top  *os.Root
	dirs []string   // dirs[i] is the path of subs[i]; each is beneath the one before
	subs []*os.Root // handles of a chain of directories beneath top
}

func openDeepRoot(dir string) (*deepRoot, error) {
	top, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &deepRoot{top: top}, nil
}

// Name is the top directory's name.
func (d *deepRoot) Name() string { return d.top.Name() }

func (d *deepRoot) Close() error {
	d.drop(0)
	return d.top.Close()
}

// drop closes the handles from the i-th on.
func (d *deepRoot) drop(i int) {
	for _, s := range d.subs[i:] {
		s.Close()
	}
	d.dirs, d.subs = d.dirs[:i], d.subs[:i]
}

// forget drops the handles of p and of the directories beneath it, before p
// is removed or replaced.
func (d *deepRoot) forget(p string) {
	// dirs[i] has i+1 names: only the one with as many as p can be p, and
	// those after it are beneath it.
	if i := strings.Count(p, "/"); i < len(d.dirs) && d.dirs[i] == p {
		d.drop(i)
	}
}

// dir returns a handle of the directory p.
func (d *deepRoot) dir(p string) (*os.Root, error) {
	if p == "." || p == "" {
		return d.top, nil
	}
	for n := len(d.dirs); n > 0; n-- {
		if pathtree.Within(p, d.dirs[n-1]) {
			break
		}
		d.drop(n - 1)
	}
	cur, prefix := d.top, ""
	if n := len(d.dirs); n > 0 {
		cur, prefix = d.subs[n-1], d.dirs[n-1]
		if prefix == p {
			return cur, nil
		}
	}
	rest := p
	if prefix != "" {
		rest = p[len(prefix)+1:]
	}
	for _, name := range strings.Split(rest, "/") {
		sub, err := cur.OpenRoot(name)
		if err != nil {
			return nil, openRootError(cur, name, err)
		}
		prefix = path.Join(prefix, name)
		d.dirs, d.subs = append(d.dirs, prefix), append(d.subs, sub)
		cur = sub
	}
	return cur, nil
}

// openRootError is the error of opening name in r as a directory, with
// the errno os.Root would give for a path through it: OpenRoot says "not a
// directory" in words only.
func openRootError(r *os.Root, name string, err error) error {
	fi, lerr := r.Lstat(name)
	switch {
	case lerr != nil:
		return lerr
	case !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0:
		return &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	return err
}

// in returns the handle of p's directory and p's last name.
func (d *deepRoot) in(p string) (*os.Root, string, error) {
	r, err := d.dir(path.Dir(p))
	if err != nil {
		return nil, "", named(err, p)
	}
	return r, path.Base(p), nil
}

// named makes an error of an operation on a sub-root name the path from
// the top.
func named(err error, p string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Path = p
	}
	return err
}

func (d *deepRoot) Lstat(p string) (fs.FileInfo, error) {
	r, base, err := d.in(p)
	if err != nil {
		return nil, err
	}
	fi, err := r.Lstat(base)
	return fi, named(err, p)
}

func (d *deepRoot) Readlink(p string) (string, error) {
	r, base, err := d.in(p)
	if err != nil {
		return "", err
	}
	t, err := r.Readlink(base)
	return t, named(err, p)
}

func (d *deepRoot) Open(p string) (*os.File, error) {
	return d.OpenFile(p, os.O_RDONLY, 0)
}

func (d *deepRoot) OpenFile(p string, flag int, perm fs.FileMode) (*os.File, error) {
	r, base, err := d.in(p)
	if err != nil {
		return nil, err
	}
	f, err := r.OpenFile(base, flag, perm)
	return f, named(err, p)
}

func (d *deepRoot) Mkdir(p string, perm fs.FileMode) error {
	r, base, err := d.in(p)
	if err != nil {
		return err
	}
	return named(r.Mkdir(base, perm), p)
}

func (d *deepRoot) Symlink(target, p string) error {
	r, base, err := d.in(p)
	if err != nil {
		return err
	}
	return named(r.Symlink(target, base), p)
}

func (d *deepRoot) Chmod(p string, mode fs.FileMode) error {
	r, base, err := d.in(p)
	if err != nil {
		return err
	}
	return named(r.Chmod(base, mode), p)
}

func (d *deepRoot) Chtimes(p string, atime, mtime time.Time) error {
	r, base, err := d.in(p)
	if err != nil {
		return err
	}
	return named(r.Chtimes(base, atime, mtime), p)
}

func (d *deepRoot) Remove(p string) error {
	r, base, err := d.in(p)
	if err != nil {
		return err
	}
	d.forget(p)
	return named(r.Remove(base), p)
}

func (d *deepRoot) RemoveAll(p string) error {
	r, base, err := d.in(p)
	if err != nil {
		return err
	}
	d.forget(p)
	return named(r.RemoveAll(base), p)
}

// Rename renames within one directory, as Apply does; across directories
// it falls back to the top.
func (d *deepRoot) Rename(from, to string) error {
	d.forget(from)
	d.forget(to)
	if path.Dir(from) != path.Dir(to) {
		return d.top.Rename(from, to)
	}
	r, base, err := d.in(to)
	if err != nil {
		return err
	}
	return named(r.Rename(path.Base(from), base), to)
}
