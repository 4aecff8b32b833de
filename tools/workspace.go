package tools

import (
	"errors"
	"github.com/corralhq/corral/internal/pathtree"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/corralhq/corral"
)

// mount is a host directory the tools reach, and where the sandbox shows
// it: view is its destination inside the sandbox (such as /workspace or
// /agent), "" when the sandbox shows it at its own path.
type mount struct {
	root, view string
	// readOnly refuses File's writes: the sandbox shows it read-only, or
	// keeps its writes in a changeset, which File, writing from the
	// calling process, would go around.
	readOnly bool
}

// shown is where the sandbox shows m.
func (m mount) shown() string {
	if m.view != "" {
		return m.view
	}
	return m.root
}

// workspace is a canonical directory that the file tools and working
// directories must stay inside, with the further directories the sandbox
// shows at destinations of their own (corral.Bind). Relative paths are
// taken from the workspace. When anything is shown at a destination, an
// absolute path the model gives is a path inside the sandbox and means
// what it means there: a path inside a destination is the same path
// inside its source, and a host path outside every destination is not a
// file the tools reach, whatever it names on the host.
type workspace struct {
	mount
	binds []mount
}

// translated reports whether absolute paths are the sandbox's, not the
// host's.
func (w workspace) translated() bool { return w.view != "" || len(w.binds) > 0 }

// mounts lists the workspace, then the binds.
func (w workspace) mounts() []mount { return append([]mount{w.mount}, w.binds...) }

// locate translates p, absolute and clean, from the sandbox's view to the
// host: the mount whose destination holds p, and p inside its source.
func (w workspace) locate(p string) (string, mount, bool) {
	for _, m := range w.mounts() {
		if rel, ok := pathtree.Rel(m.shown(), p); ok {
			return filepath.Join(m.root, rel), m, true
		}
	}
	return p, w.mount, false
}

// out translates the host path p to where the sandbox shows it.
func (w workspace) out(p string) string {
	for _, m := range w.mounts() {
		if rel, ok := pathtree.Rel(m.root, p); ok {
			return filepath.Join(m.shown(), rel)
		}
	}
	return p
}

// shown is the workspace as the model sees it.
func (w workspace) shown() string { return w.mount.shown() }

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

// withBinds returns w with the sandbox's binds, whose sources corral.New
// made canonical.
func (w workspace) withBinds(binds []corral.Bind) workspace {
	w.binds = nil
	for _, b := range binds {
		w.binds = append(w.binds, mount{root: b.Source, view: b.Dest, readOnly: b.ReadOnly || b.Changeset})
	}
	return w
}

// host turns p, as the model gives it, into a clean absolute host path and
// the mount it lies in; ok is false for an absolute path outside every
// place the sandbox shows.
func (w workspace) host(p string) (string, mount, bool) {
	if !filepath.IsAbs(p) && !w.translated() {
		return filepath.Join(w.root, p), w.mount, true
	}
	if !filepath.IsAbs(p) {
		// Relative to where the sandbox shows the workspace: "../agent/x"
		// from /workspace is /agent/x there.
		p = filepath.Join(w.shown(), p)
	}
	h, m, ok := w.locate(filepath.Clean(p))
	if !ok && !w.translated() {
		// Without destinations the sandbox's paths are the host's:
		// the checks below decide.
		return h, m, true
	}
	return h, m, ok
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
	return workspace{mount: mount{root: real}}, nil
}

// resolved is a path inside the workspace or another mount.
type resolved struct {
	abs      string // canonical, absolute
	lexical  string // the host path as given, symlinks not followed
	rel      string // relative to base; "." for base itself
	base     string // the root of the mount it lies in
	readOnly bool   // the mount's
}

// resolve turns p (absolute, or relative to the workspace) into a path inside
// the workspace, or inside the source of the destination p lies in. The
// existing part of the path is canonicalized; a path that
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
	joined, m, ok := w.host(p)
	if !ok {
		return resolved{}, &PathError{Op: op, Path: p, Workspace: w.shown(), Err: ErrOutsideWorkspace}
	}
	canon, err := canonicalize(joined)
	if err != nil {
		return resolved{}, &PathError{Op: op, Path: p, Err: err}
	}
	rel, ok := pathtree.Rel(m.root, canon)
	if !ok {
		return resolved{}, &PathError{Op: op, Path: p, Resolved: w.out(canon), Workspace: w.shown(), Err: ErrOutsideWorkspace}
	}
	if fi, err := os.Lstat(joined); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return resolved{}, &PathError{Op: op, Path: p, Err: ErrSymlink}
	}
	return resolved{abs: canon, lexical: joined, rel: rel, base: m.root, readOnly: m.readOnly}, nil
}

// open opens an os.Root on r's mount and returns it with r's path inside
// it. A mount that is one file (a bind of a file) is opened through its
// directory.
func (r resolved) open() (*os.Root, string, error) {
	base, rel := r.base, r.rel
	if rel == "." {
		if fi, err := os.Stat(base); err == nil && !fi.IsDir() {
			base, rel = filepath.Dir(base), filepath.Base(base)
		}
	}
	root, err := os.OpenRoot(base)
	return root, rel, err
}

// dir resolves a working directory: it must exist, be a directory and lie
// inside the workspace or a destination. Unlike file paths, a working directory may be reached
// through a symlink, since the command sees the canonical path.
func (w workspace) dir(p string) (string, error) {
	const op = "working_dir"
	if p == "" {
		return w.root, nil
	}
	if strings.ContainsRune(p, 0) {
		return "", &ArgError{Field: op, Value: p, Reason: "contains a NUL byte"}
	}
	joined, m, ok := w.host(p)
	if !ok {
		return "", &PathError{Op: op, Path: p, Workspace: w.shown(), Err: ErrOutsideWorkspace}
	}
	canon, err := filepath.EvalSymlinks(joined)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &PathError{Op: op, Path: p, Err: ErrNotExist}
	}
	if err != nil {
		return "", &PathError{Op: op, Path: p, Err: err}
	}
	if _, ok := pathtree.Rel(m.root, canon); !ok {
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

// planting refuses a write to r when it would write a protected entry of
// sb (corral.Sandbox.Protected), by the path as given or as it resolves:
// the guard stages, holds or refuses a command's write there, so a tool's
// must not land either, nor answer that it did. A nil sb has no rules.
func (w workspace) planting(sb *corral.Sandbox, r resolved, op, p string) error {
	if sb == nil {
		return nil
	}
	for _, hp := range []string{r.lexical, r.abs} {
		if entry, what, ok := sb.Protected(hp); ok {
			return &PathError{Op: op, Path: p, Err: &PlantingError{Entry: w.out(entry), What: what}}
		}
	}
	return nil
}
