package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/zones"
)

// ZoneFile is the file tool of a worker with zones (package zones). The
// model sees what the worker's commands see of the zones: the top
// directory "/" lists the zones the worker declared, paths are
// /NAME/..., and nothing else is reachable (a worker that declared
// nothing reaches no file). Every change goes through the zone's mode and
// approvals first: a read-only zone refuses it ("read-only file system"),
// a blocked one too ("operation not permitted"), and one that asks shows
// it, with a diff, to the worker's Approver before it is made. The I/O is
// then done inside the worker's file sandbox for that zone
// ([zones.Worker.FileSandbox]: only that zone writable),
// like [SandboxFile]'s, so what the sandbox hides, keeps read-only or
// protects inside a zone stays so. Errors are an ordinary file system's,
// naming the worker's paths; none speaks of zones.
//
// Reads show what the worker's commands see: in a zone whose commands'
// writes wait for Review (see [zones.Worker.Pending]), a file a command
// wrote is read and listed as it wrote it while the Approver decides, and
// is gone once refused. A change of the tool's own to a path where such a
// change waits is refused ([zones.ErrWaiting]) until it is decided.
type ZoneFile struct {
	w *zones.Worker
	// MaxReadBytes is the largest file Read returns.
	MaxReadBytes int64
	// MaxListItems is the most entries List returns.
	MaxListItems int
}

// NewZoneFile returns the file tool of w.
func NewZoneFile(w *zones.Worker) (*ZoneFile, error) {
	if w == nil {
		return nil, errors.New("tools: nil *zones.Worker")
	}
	return &ZoneFile{w: w, MaxReadBytes: DefaultMaxReadBytes, MaxListItems: DefaultMaxListItems}, nil
}

// deleteScript removes a file or an empty directory; statScript prints
// "dir" or a file's size.
const (
	statScript = `[ -e "$1" ] || { echo "No such file or directory" >&2; exit 1; }
if [ -d "$1" ]; then echo dir; else stat -c %s -- "$1"; fi`
	deleteScript = `if [ -d "$1" ]; then exec rmdir -- "$1"; else exec rm -- "$1"; fi`
)

// zone checks p, a worker's path, and returns it clean with its zone's
// name ("" for the top directory). A zone the worker lacks does not
// exist.
func (f *ZoneFile) zone(op, p string) (string, string, error) {
	if p == "" {
		return "", "", &ArgError{Field: "path", Reason: "empty"}
	}
	name, _, err := zones.Split(p)
	if err != nil {
		return "", "", &ArgError{Field: "path", Value: p, Reason: "want an absolute path, such as /" + f.example()}
	}
	clean := path.Clean(p)
	if name == "" {
		return clean, "", nil
	}
	if _, ok := f.w.Access().Zone(name); !ok {
		return "", "", &PathError{Op: op, Path: p, Err: ErrNotExist}
	}
	return clean, name, nil
}

func (f *ZoneFile) example() string {
	if names := f.w.Access().Names(); len(names) > 0 {
		return names[0] + "/file.txt"
	}
	return "dir/file.txt"
}

// inside returns a SandboxFile on the worker's file sandbox for the zone
// name.
func (f *ZoneFile) inside(name string) (*SandboxFile, error) {
	sb, err := f.w.FileSandbox(name)
	if err != nil {
		return nil, err
	}
	sf, err := NewSandboxFile(sb)
	if err != nil {
		return nil, err
	}
	sf.MaxReadBytes, sf.MaxListItems = f.MaxReadBytes, f.MaxListItems
	return sf, nil
}

// Read returns the content of the regular file at p.
func (f *ZoneFile) Read(ctx context.Context, p string) (string, error) {
	return f.read(ctx, p, p, maxWaitingLinks)
}

// read is Read of p, reached from the worker's path orig through waiting
// symlinks; links is how many more of them it may follow.
func (f *ZoneFile) read(ctx context.Context, p, orig string, links int) (string, error) {
	const op = "read"
	clean, name, err := f.zone(op, p)
	if err != nil {
		return "", renamed(err, orig)
	}
	if name == "" {
		return "", &PathError{Op: op, Path: orig, Err: ErrIsDir}
	}
	l, err := f.waiting(op, clean, orig, links)
	switch {
	case err != nil:
		return "", err
	case l.next != "":
		return f.read(ctx, l.next, orig, links-1)
	case l.ch != nil:
		return f.readWaiting(l, orig)
	}
	sf, err := f.inside(name)
	if err != nil {
		return "", err
	}
	s, err := sf.Read(ctx, clean)
	return s, plain(err, orig)
}

// readWaiting reads the file a command left waiting for review.
func (f *ZoneFile) readWaiting(l waiting, orig string) (string, error) {
	const op = "read"
	switch l.ch.Type {
	case changeset.Dir:
		return "", &PathError{Op: op, Path: orig, Err: ErrIsDir}
	case changeset.File:
	default:
		return "", &PathError{Op: op, Path: orig, Err: ErrNotRegular}
	}
	b, err := l.pend.ReadFile(l.ch.Path, f.MaxReadBytes+1)
	if err != nil {
		return "", &PathError{Op: op, Path: orig, Err: err}
	}
	if int64(len(b)) > f.MaxReadBytes {
		return "", &PathError{Op: op, Path: orig, Err: errors.Join(ErrTooLarge, errors.New("the limit is "+strconv.FormatInt(f.MaxReadBytes, 10)+" bytes"))}
	}
	return string(b), nil
}

// List returns the entries of the directory at p, sorted by name, and
// whether the listing was cut at MaxListItems; "/" lists the zones.
func (f *ZoneFile) List(ctx context.Context, p string) ([]Entry, bool, error) {
	return f.list(ctx, p, p, maxWaitingLinks)
}

// list is List of p, reached as read is.
func (f *ZoneFile) list(ctx context.Context, p, orig string, links int) ([]Entry, bool, error) {
	const op = "list"
	clean, name, err := f.zone(op, p)
	if err != nil {
		return nil, false, renamed(err, orig)
	}
	if name == "" {
		entries := []Entry{}
		for _, n := range f.w.Access().Names() {
			entries = append(entries, Entry{Name: n, Type: "dir"})
		}
		return entries, false, nil
	}
	l, err := f.waiting(op, clean, orig, links)
	switch {
	case err != nil:
		return nil, false, err
	case l.next != "":
		return f.list(ctx, l.next, orig, links-1)
	case l.ch != nil && l.ch.Type != changeset.Dir:
		return nil, false, &PathError{Op: op, Path: orig, Err: ErrNotDir}
	}
	var entries []Entry
	cut := false
	if l.ch == nil || l.ch.Status == changeset.Modified {
		// The host's directory shows through, with what waits in it.
		sf, err := f.inside(name)
		if err != nil {
			return nil, false, err
		}
		if entries, cut, err = sf.List(ctx, clean); err != nil {
			return nil, false, plain(err, orig)
		}
	}
	if l.pend == nil {
		return entries, cut, nil
	}
	entries = withWaiting(entries, l.pend.Children(l.rel))
	if len(entries) > f.MaxListItems {
		entries, cut = entries[:f.MaxListItems], true
	}
	return entries, cut, nil
}

// withWaiting is the listing entries of a directory on the host with the
// changes waiting in it applied, sorted by name.
func withWaiting(entries []Entry, changes []changeset.Change) []Entry {
	for _, ch := range changes {
		name := path.Base(ch.Path)
		entries = slices.DeleteFunc(entries, func(e Entry) bool { return e.Name == name })
		if ch.Status == changeset.Deleted {
			continue
		}
		e := Entry{Name: name, Type: "other"}
		switch ch.Type {
		case changeset.File:
			e.Type, e.Size = "file", ch.Size
		case changeset.Dir:
			e.Type = "dir"
		case changeset.Symlink:
			e.Type = "symlink"
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	if entries == nil {
		entries = []Entry{}
	}
	return entries
}

// maxWaitingLinks is how many waiting symlinks one path may go through, as
// the kernel allows 40.
const maxWaitingLinks = 40

// waiting is what the worker sees at a path of a zone while its commands'
// changes wait for review (see zones.Pending.Lookup).
type waiting struct {
	pend *zones.Pending    // nil: nothing waits in the zone
	rel  string            // the path inside the zone
	ch   *changeset.Change // the change waiting at the path itself
	next string            // a waiting symlink's target, with the rest of the path
}

// waiting looks clean up among the changes waiting in its zone; an error
// names orig, the worker's path.
func (f *ZoneFile) waiting(op, clean, orig string, links int) (waiting, error) {
	name, rel, _ := zones.Split(clean)
	pend, err := f.w.Pending(name)
	if err != nil || pend == nil {
		return waiting{}, err
	}
	l, err := pend.Lookup(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return waiting{}, &PathError{Op: op, Path: orig, Err: ErrNotExist}
	case errors.Is(err, syscall.ENOTDIR):
		return waiting{}, &PathError{Op: op, Path: orig, Err: ErrNotDir}
	case err != nil:
		return waiting{}, &PathError{Op: op, Path: orig, Err: err}
	case l.Link == nil:
		return waiting{pend: pend, rel: rel, ch: l.Change}, nil
	case links == 0:
		return waiting{}, &PathError{Op: op, Path: orig, Err: syscall.ELOOP}
	}
	// A command's new symlink, followed as the command would: within the
	// worker's zones, or not at all.
	at := path.Join("/", name, l.Link.Path)
	next := path.Join(path.Dir(at), l.Link.Target, l.Rest)
	if path.IsAbs(l.Link.Target) {
		next = path.Join(l.Link.Target, l.Rest)
	}
	if n, _, err := zones.Split(next); err != nil || n == "" {
		return waiting{}, &PathError{Op: op, Path: orig, Err: fs.ErrPermission}
	} else if _, ok := f.w.Access().Zone(n); !ok {
		return waiting{}, &PathError{Op: op, Path: orig, Err: fs.ErrPermission}
	}
	return waiting{next: next}, nil
}

// refuseOverWaiting refuses a change of the tool's at clean while a
// command's change waits at, above or beneath it.
func (f *ZoneFile) refuseOverWaiting(op, clean, orig string) error {
	name, rel, _ := zones.Split(clean)
	pend, err := f.w.Pending(name)
	if err != nil {
		return err
	}
	if pend != nil && pend.Waits(rel) {
		return &PathError{Op: op, Path: orig, Err: zones.ErrWaiting}
	}
	return nil
}

// renamed makes an error of zone name the worker's path orig.
func renamed(err error, orig string) error {
	var pe *PathError
	if errors.As(err, &pe) && pe.Path != orig {
		out := *pe
		out.Path = orig
		return &out
	}
	return err
}

// Write replaces the file at p with content, creating it and its parent
// directories as needed, once the zone's mode and approvals allow it.
func (f *ZoneFile) Write(ctx context.Context, p, content string) error {
	const op = "write"
	clean, name, err := f.zone(op, p)
	if err != nil {
		return err
	}
	if IsProtectedFile(clean) {
		return &PathError{Op: op, Path: p, Err: ErrProtected}
	}
	d, err := f.w.Access().Decide(zones.OpWrite, op, clean)
	if err != nil {
		return err
	}
	if err := f.refuseOverWaiting(op, clean, p); err != nil {
		return err
	}
	sf, err := f.inside(name)
	if err != nil {
		return err
	}
	if d == zones.NeedsApproval {
		old, err := sf.Read(ctx, clean)
		if err != nil && !errors.Is(err, ErrNotExist) {
			return plain(err, p)
		}
		req := zones.WriteRequest(clean, []byte(old), []byte(content))
		if err := f.w.Access().Authorize(ctx, f.w.Approver(), op, req); err != nil {
			return err
		}
	}
	return plain(sf.Write(ctx, clean, content), p)
}

// Edit replaces old by new in the file at p, where old must occur exactly
// once (see [ReplaceUnique]); the change is a write of the whole file.
func (f *ZoneFile) Edit(ctx context.Context, p, old, new string) error {
	content, err := f.Read(ctx, p)
	if err != nil {
		return err
	}
	edited, err := ReplaceUnique(content, old, new)
	if err != nil {
		return &PathError{Op: "edit", Path: p, Err: err}
	}
	return f.Write(ctx, p, edited)
}

// Delete removes the file or empty directory at p, once the zone's mode
// and approvals allow it.
func (f *ZoneFile) Delete(ctx context.Context, p string) error {
	const op = "remove"
	clean, name, err := f.zone(op, p)
	if err != nil {
		return err
	}
	d, err := f.w.Access().Decide(zones.OpDelete, op, clean)
	if err != nil {
		return err
	}
	if err := f.refuseOverWaiting(op, clean, p); err != nil {
		return err
	}
	sf, err := f.inside(name)
	if err != nil {
		return err
	}
	r, err := sf.r.ws.resolve(op, clean)
	if err != nil {
		return plain(err, p)
	}
	at := sf.r.ws.out(r.abs)
	if d == zones.NeedsApproval {
		st, err := sf.script(ctx, op, p, statScript, "", 64, at)
		if err != nil {
			return plain(err, p)
		}
		req := zones.Request{Op: zones.OpDelete, Path: clean, Dir: strings.TrimSpace(st) == "dir"}
		req.Size, _ = strconv.ParseInt(strings.TrimSpace(st), 10, 64)
		if err := f.w.Access().Authorize(ctx, f.w.Approver(), op, req); err != nil {
			return err
		}
	}
	_, err = sf.script(ctx, op, p, deleteScript, "", 0, at)
	return plain(err, p)
}

// Run performs args ("read", "write", "list" or "delete") and returns the
// text given back to the model.
func (f *ZoneFile) Run(ctx context.Context, args FileArgs) (string, error) {
	switch args.Operation {
	case "read":
		return f.Read(ctx, args.Path)
	case "write":
		if err := f.Write(ctx, args.Path, args.Content); err != nil {
			return "", err
		}
		return fmt.Sprintf("Wrote %d bytes to %s.", len(args.Content), args.Path), nil
	case "list":
		entries, cut, err := f.List(ctx, args.Path)
		if err != nil {
			return "", err
		}
		return formatEntries(entries, cut), nil
	case "delete":
		if err := f.Delete(ctx, args.Path); err != nil {
			return "", err
		}
		return "Deleted " + args.Path + ".", nil
	}
	return "", &ArgError{Field: "operation", Value: args.Operation, Reason: `want "read", "write", "list" or "delete"`}
}

// plain rewords a refusal of the sandboxed tool for the worker: a path
// that resolves outside its zone (through a symlink) is a permission
// error, without the scratch workspace the refusal would name, and every
// error names the worker's path p.
func plain(err error, p string) error {
	var pe *PathError
	if !errors.As(err, &pe) {
		return err
	}
	out := &PathError{Op: pe.Op, Path: p, Err: pe.Err}
	if errors.Is(pe.Err, ErrOutsideWorkspace) {
		out.Err = fs.ErrPermission
	}
	if errors.Is(pe.Err, syscall.EROFS) {
		out.Err = ErrReadOnly
	}
	return out
}
