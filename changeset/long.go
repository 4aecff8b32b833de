package changeset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A sandboxed command can nest directories deeper than PATH_MAX (4096
// bytes), which a system call refuses as a path. Every path this package
// hands the kernel outside an os.Root goes through short: a path longer
// than maxPath is reached through a handle of its directory, opened a chunk
// at a time, each chunk relative to the handle of the one before, and named
// as /proc/self/fd/N/NAME. os.Root, which Apply and Import write through,
// resolves one name at a time and needs none of this (see deepRoot).

// maxPath is the longest path given to a system call as it is.
const maxPath = 2048

// dirHandles keeps the handles of the directories of long paths while an
// operation runs, so that walking a deep tree opens each directory once.
// It is emptied when the last operation using it ends: a handle names a
// directory, and the directory at a path may be replaced between
// operations.
var dirHandles struct {
	sync.Mutex
	users int
	fds   map[string]int
	order []string
}

// maxHandles bounds the directory handles kept.
const maxHandles = 64

// longPaths marks an operation that may meet long paths; call the returned
// function at its end.
func longPaths() (end func()) {
	dirHandles.Lock()
	dirHandles.users++
	dirHandles.Unlock()
	return func() {
		dirHandles.Lock()
		defer dirHandles.Unlock()
		if dirHandles.users--; dirHandles.users == 0 {
			for _, fd := range dirHandles.fds {
				closeHandle(fd)
			}
			dirHandles.fds, dirHandles.order = nil, nil
		}
	}
}

// short calls f with a name for p no longer than about maxPath. An error
// naming the short name is made to name p again. Calls with long paths are
// serialized: a handle is in use while f runs.
func short(p string, f func(string) error) error {
	if len(p) <= maxPath {
		return f(p)
	}
	i := strings.LastIndexByte(p, '/')
	if i <= 0 || len(p)-i > 256 {
		return &fs.PathError{Op: "open", Path: p, Err: errors.New("a name is too long")}
	}
	dirHandles.Lock()
	defer dirHandles.Unlock()
	fd, release, err := dirHandle(p[:i])
	if err != nil {
		return &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer release()
	name := "/proc/self/fd/" + strconv.Itoa(fd) + p[i:]
	err = f(name)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && strings.HasPrefix(pe.Path, name) {
		pe.Path = p + pe.Path[len(name):]
	}
	return err
}

// dirHandle returns a handle of the directory dir, kept while an operation
// runs; release closes it when no operation keeps it. The caller holds
// dirHandles.
func dirHandle(dir string) (fd int, release func(), err error) {
	keep := func() {}
	if fd, ok := dirHandles.fds[dir]; ok {
		return fd, keep, nil
	}
	fd, err = openNear(dir)
	if err != nil {
		return -1, nil, err
	}
	if dirHandles.users == 0 {
		return fd, func() { closeHandle(fd) }, nil
	}
	if dirHandles.fds == nil {
		dirHandles.fds = map[string]int{}
	}
	if len(dirHandles.order) >= maxHandles {
		old := dirHandles.order[0]
		closeHandle(dirHandles.fds[old])
		delete(dirHandles.fds, old)
		dirHandles.order = dirHandles.order[1:]
	}
	dirHandles.fds[dir] = fd
	dirHandles.order = append(dirHandles.order, dir)
	return fd, keep, nil
}

// openNear opens dir from the nearest directory above it whose handle is
// kept, or from the start of the path, a chunk at a time.
func openNear(dir string) (int, error) {
	from, rest := -1, dir
	for j := len(dir); j > 0 && len(dir)-j <= maxPath; {
		j = strings.LastIndexByte(dir[:j], '/')
		if fd, ok := dirHandles.fds[dir[:max(j, 0)]]; ok && j > 0 {
			from, rest = fd, dir[j+1:]
			break
		}
	}
	fd := -1
	for {
		base := from
		if fd >= 0 {
			base = fd
		}
		cut := len(rest)
		if cut > maxPath {
			// The chunk ends at a slash: names are at most 255 bytes long.
			cut = strings.LastIndexByte(rest[:maxPath], '/')
			if cut <= 0 {
				return -1, errors.New("a name is too long")
			}
		}
		next, err := openDirAt(base, rest[:cut])
		if fd >= 0 {
			closeHandle(fd)
		}
		if err != nil {
			return -1, err
		}
		fd = next
		if cut == len(rest) {
			return fd, nil
		}
		rest = rest[cut+1:]
	}
}

// The file operations of this package, for paths of any length.

func lstat(p string) (fi fs.FileInfo, err error) {
	err = short(p, func(s string) (err error) { fi, err = os.Lstat(s); return err })
	return fi, err
}

func readlink(p string) (t string, err error) {
	err = short(p, func(s string) (err error) { t, err = os.Readlink(s); return err })
	return t, err
}

// openFile opens p for reading. The handle, once open, does not depend on
// the path.
func openFile(p string) (f *os.File, err error) {
	err = short(p, func(s string) (err error) { f, err = os.Open(s); return err })
	return f, err
}

func readFile(p string) (b []byte, err error) {
	err = short(p, func(s string) (err error) { b, err = os.ReadFile(s); return err })
	return b, err
}

// readDirNames returns the names in the directory p, sorted.
func readDirNames(p string) ([]string, error) {
	f, err := openFile(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

func chmod(p string, mode fs.FileMode) error {
	return short(p, func(s string) error { return os.Chmod(s, mode) })
}

// walkTree calls fn for every entry beneath root, parents first, in name
// order, with its path relative to root (slashes) and its lstat. fn
// returns whether to descend into a directory. Entries that vanish during
// the walk are skipped.
func walkTree(root string, fn func(rel string, fi fs.FileInfo) (bool, error)) error {
	return walkDir(root, "", fn)
}

func walkDir(root, rel string, fn func(string, fs.FileInfo) (bool, error)) error {
	names, err := readDirNames(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	for _, n := range names {
		child := n
		if rel != "" {
			child = rel + "/" + n
		}
		fi, err := lstat(filepath.Join(root, filepath.FromSlash(child)))
		if err != nil {
			if isAbsent(err) {
				continue
			}
			return err
		}
		descend, err := fn(child, fi)
		if err != nil {
			return err
		}
		if descend && fi.IsDir() {
			if err := walkDir(root, child, fn); err != nil {
				return err
			}
		}
	}
	return nil
}
