package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// workspace is a canonical directory that the file tools and working
// directories must stay inside. view, when set, is where the sandbox shows
// root (a mount destination such as /workspace): absolute paths the model
// gives are taken from there, and paths handed back are put there.
type workspace struct{ root, view string }

// in translates p from the sandbox's view to the host: an absolute path
// inside view becomes the same path inside root.
func (w workspace) in(p string) string {
	if w.view == "" || !filepath.IsAbs(p) {
		return p
	}
	if rel, ok := inside(w.view, filepath.Clean(p)); ok {
		return filepath.Join(w.root, rel)
	}
	return p
}

// out translates the host path p inside root to where the sandbox shows it.
func (w workspace) out(p string) string {
	if w.view == "" {
		return p
	}
	if rel, ok := inside(w.root, p); ok {
		return filepath.Join(w.view, rel)
	}
	return p
}

// shown is root as the model sees it.
func (w workspace) shown() string { return w.out(w.root) }

// withView returns w shown at view, an absolute clean path; "" or root
// itself mean no translation.
func (w workspace) withView(view string) (workspace, error) {
	if view == "" || view == w.root {
		return w, nil
	}
	if !filepath.IsAbs(view) || filepath.Clean(view) != view {
		return w, &ArgError{Field: "view", Value: view, Reason: "want an absolute, clean path"}
	}
	w.view = view
	return w, nil
}

// newWorkspace canonicalizes dir once, so later comparisons are between
// canonical paths (on macOS /var is really /private/var).
func newWorkspace(dir string) (workspace, error) {
	if dir == "" {
		return workspace{}, &ArgError{Field: "workspace", Reason: "empty"}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return workspace{}, &PathError{Op: "workspace", Path: dir, Err: err}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return workspace{}, &PathError{Op: "workspace", Path: dir, Err: err}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return workspace{}, &PathError{Op: "workspace", Path: dir, Err: err}
	}
	if !fi.IsDir() {
		return workspace{}, &PathError{Op: "workspace", Path: dir, Err: ErrNotDir}
	}
	return workspace{root: real}, nil
}

// resolved is a path inside the workspace.
type resolved struct {
	abs string // canonical, absolute
	rel string // relative to the workspace root; "." for the root itself
}

// resolve turns p (absolute, or relative to the workspace) into a path inside
// the workspace. The existing part of the path is canonicalized; a path that
// does not exist yet is resolved through its deepest existing ancestor. The
// result must lie inside the workspace, and the path itself must not be a
// symlink.
//
// resolve gives a clear refusal; it is not what keeps file I/O inside the
// workspace against a concurrent rename or symlink swap. The callers do
// their I/O through an os.Root on the workspace, which is.
func (w workspace) resolve(op, p string) (resolved, error) {
	if p == "" {
		return resolved{}, &ArgError{Field: "path", Reason: "empty"}
	}
	if strings.ContainsRune(p, 0) {
		return resolved{}, &ArgError{Field: "path", Value: p, Reason: "contains a NUL byte"}
	}
	joined := w.in(p)
	if !filepath.IsAbs(joined) {
		joined = filepath.Join(w.root, joined)
	}
	joined = filepath.Clean(joined)
	canon, err := canonicalize(joined)
	if err != nil {
		return resolved{}, &PathError{Op: op, Path: p, Err: err}
	}
	rel, ok := inside(w.root, canon)
	if !ok {
		return resolved{}, &PathError{Op: op, Path: p, Resolved: w.out(canon), Workspace: w.shown(), Err: ErrOutsideWorkspace}
	}
	if fi, err := os.Lstat(joined); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return resolved{}, &PathError{Op: op, Path: p, Err: ErrSymlink}
	}
	return resolved{abs: canon, rel: rel}, nil
}

// dir resolves a working directory: it must exist, be a directory and lie
// inside the workspace. Unlike file paths, a working directory may be reached
// through a symlink, since the command sees the canonical path.
func (w workspace) dir(p string) (string, error) {
	const op = "working_dir"
	if p == "" {
		return w.root, nil
	}
	if strings.ContainsRune(p, 0) {
		return "", &ArgError{Field: op, Value: p, Reason: "contains a NUL byte"}
	}
	joined := w.in(p)
	if !filepath.IsAbs(joined) {
		joined = filepath.Join(w.root, joined)
	}
	canon, err := filepath.EvalSymlinks(joined)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &PathError{Op: op, Path: p, Err: ErrNotExist}
	}
	if err != nil {
		return "", &PathError{Op: op, Path: p, Err: err}
	}
	if _, ok := inside(w.root, canon); !ok {
		return "", &PathError{Op: op, Path: p, Resolved: w.out(canon), Workspace: w.shown(), Err: ErrOutsideWorkspace}
	}
	fi, err := os.Stat(canon)
	if err != nil {
		return "", &PathError{Op: op, Path: p, Err: err}
	}
	if !fi.IsDir() {
		return "", &PathError{Op: op, Path: p, Err: ErrNotDir}
	}
	return canon, nil
}

// canonicalize resolves every symlink in the existing part of p, an absolute
// clean path, and appends the part that does not exist yet.
func canonicalize(p string) (string, error) {
	var missing []string
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{real}, missing...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", unwrapPathErr(err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		missing = append([]string{filepath.Base(cur)}, missing...)
		cur = parent
	}
}

// unwrapPathErr drops the *fs.PathError layer, whose path the caller's own
// error already names.
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// inside reports whether p is root or lies beneath it, and p relative to root.
func inside(root, p string) (string, bool) {
	if p == root {
		return ".", true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	rel, ok := strings.CutPrefix(p, prefix)
	return rel, ok
}
