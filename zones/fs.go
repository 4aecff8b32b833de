package zones

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"syscall"
	"time"

	"github.com/aymanbagabas/go-udiff"
)

// FS is the file tools' view of an Access: a tree whose top directory
// holds one directory per zone, read and written in-process. Every change
// goes through the zone's mode and approvals; I/O goes through an os.Root
// of the zone's directory, so no path (nor a symlink in the tree) leads
// out of it. Errors are *fs.PathError values naming the worker's path, in
// an ordinary file system's words.
type FS struct {
	access   *Access
	approver Approver
}

// NewFS returns the file view of a. ap decides changes that need approval;
// nil refuses them all. A nil or empty a refuses everything.
func NewFS(a *Access, ap Approver) *FS { return &FS{access: a, approver: ap} }

// Info describes one entry.
type Info struct {
	Name    string    `json:"name"`
	Size    int64     `json:"size"`
	Dir     bool      `json:"dir"`
	ModTime time.Time `json:"mod_time"`
}

// open returns the root of the zone p lies in and p's path inside it.
func (f *FS) open(fsOp, p string) (*os.Root, string, error) {
	name, rel, err := Split(p)
	if err != nil {
		return nil, "", err
	}
	z, ok := f.access.Zone(name)
	if !ok {
		return nil, "", &fs.PathError{Op: fsOp, Path: p, Err: syscall.ENOENT}
	}
	r, err := os.OpenRoot(z.Path)
	if err != nil {
		return nil, "", &fs.PathError{Op: fsOp, Path: p, Err: syscall.ENOENT}
	}
	return r, rel, nil
}

// fail rewrites an error of the host file system to name the worker's
// path, never the host's.
func fail(fsOp, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: fsOp, Path: p, Err: err}
}

// List returns the names in directory p, sorted; "/" lists the zones.
func (f *FS) List(p string) ([]string, error) {
	if name, _, err := Split(p); err != nil {
		return nil, err
	} else if name == "" {
		if f.access.Pure() {
			return []string{}, nil
		}
		return f.access.Names(), nil
	}
	r, rel, err := f.open("readdir", p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	d, err := r.Open(rel)
	if err != nil {
		return nil, fail("readdir", p, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fail("readdir", p, err)
	}
	slices.Sort(names)
	return names, nil
}

// Stat describes p.
func (f *FS) Stat(p string) (Info, error) {
	if name, _, err := Split(p); err != nil {
		return Info{}, err
	} else if name == "" {
		return Info{Name: "/", Dir: true}, nil
	}
	r, rel, err := f.open("stat", p)
	if err != nil {
		return Info{}, err
	}
	defer r.Close()
	fi, err := r.Stat(rel)
	if err != nil {
		return Info{}, fail("stat", p, err)
	}
	return Info{Name: fi.Name(), Size: fi.Size(), Dir: fi.IsDir(), ModTime: fi.ModTime()}, nil
}

// Read returns the content of file p.
func (f *FS) Read(p string) ([]byte, error) {
	if name, _, err := Split(p); err != nil {
		return nil, err
	} else if name == "" {
		return nil, &fs.PathError{Op: "read", Path: p, Err: syscall.EISDIR}
	}
	r, rel, err := f.open("read", p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := r.ReadFile(rel)
	if err != nil {
		return nil, fail("read", p, err)
	}
	return b, nil
}

// Write makes file p hold data, creating the directories above it, once
// the zone's policy allows: the Approver sees a diff of a text file, the
// size of any other.
func (f *FS) Write(ctx context.Context, p string, data []byte) error {
	if _, err := f.access.Decide(OpWrite, "write", p); err != nil {
		return err
	}
	if err := f.protected("write", p); err != nil {
		return err
	}
	r, rel, err := f.open("write", p)
	if err != nil {
		return err
	}
	defer r.Close()
	old, err := r.ReadFile(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("write", p, err)
	}
	req := WriteRequest(p, old, data)
	if err := f.access.Authorize(ctx, f.approver, "write", req); err != nil {
		return err
	}
	if dir := path.Dir(rel); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return fail("write", p, err)
		}
	}
	zone, _, _ := Split(p)
	if testHookBeforeWrite != nil {
		testHookBeforeWrite()
	}
	return f.writeHeld(r, zone, rel, data, p)
}

// testHookBeforeWrite, when set by a test, runs between a write's checks
// and the write: where a command running meanwhile would swap a path.
var testHookBeforeWrite func()

// Mkdir makes directory p and those above it.
func (f *FS) Mkdir(ctx context.Context, p string) error {
	if _, err := f.access.Decide(OpWrite, "mkdir", p); err != nil {
		return err
	}
	if err := f.protected("mkdir", p); err != nil {
		return err
	}
	if err := f.access.Authorize(ctx, f.approver, "mkdir", Request{Op: OpWrite, Path: p, Dir: true}); err != nil {
		return err
	}
	r, rel, err := f.open("mkdir", p)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.MkdirAll(rel, 0o755); err != nil {
		return fail("mkdir", p, err)
	}
	return nil
}

// Delete removes file or empty directory p.
func (f *FS) Delete(ctx context.Context, p string) error {
	if _, err := f.access.Decide(OpDelete, "remove", p); err != nil {
		return err
	}
	r, rel, err := f.open("remove", p)
	if err != nil {
		return err
	}
	defer r.Close()
	fi, err := r.Lstat(rel)
	if err != nil {
		return fail("remove", p, err)
	}
	req := Request{Op: OpDelete, Path: p, Size: fi.Size(), Dir: fi.IsDir()}
	if err := f.access.Authorize(ctx, f.approver, "remove", req); err != nil {
		return err
	}
	if err := r.Remove(rel); err != nil {
		return fail("remove", p, err)
	}
	return nil
}

// WriteRequest is the Request of a write that makes the worker's file p
// hold data where it held old (nil for a new file): its size, and a
// unified diff when both are text.
func WriteRequest(p string, old, data []byte) Request {
	return Request{Op: OpWrite, Path: p, Size: int64(len(data)), Diff: textDiff(p, old, data)}
}

// textDiff is a unified diff from old to new when both are text, else "".
func textDiff(p string, old, new []byte) string {
	if bytes.IndexByte(old, 0) >= 0 || bytes.IndexByte(new, 0) >= 0 {
		return ""
	}
	return udiff.Unified("a"+p, "b"+p, string(old), string(new))
}
