package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"

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
// Reads show the zones as they are on the host: what a command left
// waiting for review is not there until Review applies it.
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
	clean, name, err := f.zone("read", p)
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", &PathError{Op: "read", Path: p, Err: ErrIsDir}
	}
	sf, err := f.inside(name)
	if err != nil {
		return "", err
	}
	s, err := sf.Read(ctx, clean)
	return s, plain(err, p)
}

// List returns the entries of the directory at p, sorted by name, and
// whether the listing was cut at MaxListItems; "/" lists the zones.
func (f *ZoneFile) List(ctx context.Context, p string) ([]Entry, bool, error) {
	clean, name, err := f.zone("list", p)
	if err != nil {
		return nil, false, err
	}
	if name == "" {
		entries := []Entry{}
		for _, n := range f.w.Access().Names() {
			entries = append(entries, Entry{Name: n, Type: "dir"})
		}
		return entries, false, nil
	}
	sf, err := f.inside(name)
	if err != nil {
		return nil, false, err
	}
	entries, cut, err := sf.List(ctx, clean)
	return entries, cut, plain(err, p)
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
