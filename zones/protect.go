package zones

import (
	"errors"
	"fmt"
	"github.com/corralhq/corral/internal/heldwrite"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/internal/guard"
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
	// What the host's programs reach through a protected entry, or git
	// runs from a worktree, in the zone: a symlink's target, hooksPath.
	if root, err := filepath.EvalSymlinks(z.Path); err == nil {
		if real := realRel(z.Path, rel); real != "" {
			if entry, why, ok := guard.Follows(path.Join(root, real), []string{root}, nil, guard.Names()); ok {
				if r, err := filepath.Rel(root, entry); err == nil {
					entry = filepath.ToSlash(r)
				}
				return &fs.PathError{Op: fsOp, Path: p, Err: fmt.Errorf("%w: /%s/%s is protected (%s); ask the user", ErrProtected, name, entry, why)}
			}
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

// writeHeld writes data to rel in the zone directory r (the zone's root,
// named zone) as the check of protected entries saw it (see
// heldwrite.Write): the file must lie in the zone and be no protected
// entry of it.
func (f *FS) writeHeld(r *os.Root, zone, rel string, data []byte, p string) error {
	var refused error
	err := heldwrite.Write(r, rel, data, func(target string) error {
		realRoot, err := filepath.EvalSymlinks(r.Name())
		if err != nil {
			return err
		}
		inZone, err := filepath.Rel(realRoot, target)
		if err != nil || !filepath.IsLocal(inZone) {
			return heldwrite.ErrChanged
		}
		if err := f.protected("write", "/"+zone+"/"+filepath.ToSlash(inZone)); err != nil {
			refused = &fs.PathError{Op: "write", Path: p, Err: errors.Unwrap(err)}
			return refused
		}
		return nil
	})
	switch {
	case err == nil:
		return nil
	case refused != nil && err == refused:
		return err
	case errors.Is(err, heldwrite.ErrSymlink):
		err = syscall.ELOOP
	}
	return fail("write", p, err)
}
