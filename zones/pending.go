package zones

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/corralhq/corral/changeset"
)

// ErrWaiting refuses a file tool's change to a path where a command's
// change still waits for Review: made beside it, the tool's change would
// be hidden by the waiting one, or undo it behind the Approver's back.
var ErrWaiting = &policyError{"a change made here waits for approval; try again once it is decided"}

// Pending is what a worker's commands left waiting for Review in one zone:
// the view its file tools read while the Approver decides, as the
// commands see it. Paths are relative to the zone, with slashes.
type Pending struct {
	upper   string
	changes map[string]changeset.Change
}

// Pending returns what waits for Review in the zone name, or nil when
// nothing does: then the zone on the host is what the worker sees.
func (w *Worker) Pending(name string) (*Pending, error) {
	z, ok := w.access.Zone(name)
	if !ok || w.cs == "" || !needsReview(z) {
		return nil, nil
	}
	cs, err := changeset.Open(w.cs)
	if err != nil {
		return nil, err
	}
	var root changeset.Root
	for _, r := range cs.Roots() {
		if r.Path == z.Path {
			root = r
		}
	}
	if root.Upper == "" {
		return nil, nil // not overlaid: nothing can wait there
	}
	if empty, err := emptyDir(root.Upper); err != nil || empty {
		return nil, err
	}
	list, err := cs.ListRoot(root.Path)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	p := &Pending{upper: root.Upper, changes: make(map[string]changeset.Change, len(list))}
	for _, ch := range list {
		p.changes[ch.Path] = ch
	}
	return p, nil
}

func emptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

// Lookup is what the worker sees at a path while the changes wait.
type Lookup struct {
	// Change is the change waiting at the path itself (never a deletion):
	// Change.Type is what is there now. Nil when none waits there.
	Change *changeset.Change
	// Link is a waiting symlink at a directory above the path, or at the
	// path itself, to follow: Rest is what comes after it.
	Link *changeset.Change
	Rest string
}

// Host reports whether neither the path nor a directory above it waits:
// the host's file is what the worker sees.
func (l Lookup) Host() bool { return l.Change == nil && l.Link == nil }

// Lookup resolves rel ("." for the zone's top) in the view: an error is
// fs.ErrNotExist for a path deleted, or beneath a directory that is new or
// was replaced and not put back, and ENOTDIR beneath a file.
func (p *Pending) Lookup(rel string) (Lookup, error) {
	if rel == "." {
		return Lookup{}, nil
	}
	parts := strings.Split(rel, "/")
	fresh := false // beneath a new or replaced directory: only what waits is there
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		ch, ok := p.changes[prefix]
		last := i == len(parts)-1
		switch {
		case !ok && fresh:
			return Lookup{}, fs.ErrNotExist
		case !ok:
			continue
		case ch.Status == changeset.Deleted:
			return Lookup{}, fs.ErrNotExist
		case ch.Type == changeset.Symlink:
			return Lookup{Link: &ch, Rest: strings.Join(parts[i+1:], "/")}, nil
		case ch.Type != changeset.Dir && !last:
			return Lookup{}, syscall.ENOTDIR
		case last:
			return Lookup{Change: &ch}, nil
		}
		fresh = fresh || ch.Status == changeset.Added || ch.Status == changeset.Replaced
	}
	return Lookup{}, nil
}

// Children are the changes waiting directly in the directory rel.
func (p *Pending) Children(rel string) []changeset.Change {
	var out []changeset.Change
	for _, ch := range p.changes {
		if path.Dir(ch.Path) == rel {
			out = append(out, ch)
		}
	}
	return out
}

// Waits reports whether a change waits at rel, in a directory above it or
// beneath it.
func (p *Pending) Waits(rel string) bool {
	if rel == "." {
		return len(p.changes) > 0
	}
	for q := range p.changes {
		if q == rel || strings.HasPrefix(rel, q+"/") || strings.HasPrefix(q, rel+"/") {
			return true
		}
	}
	return false
}

// ReadFile returns up to max bytes of the waiting file at rel (one
// Lookup gave as a Change of type file), read from the changeset without
// leaving it.
func (p *Pending) ReadFile(rel string, max int64) ([]byte, error) {
	r, err := os.OpenRoot(p.upper)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// Not blocking: a command still running could have put a fifo there
	// since the listing.
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, max))
}
