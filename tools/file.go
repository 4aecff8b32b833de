package tools

import (
	"errors"
	"fmt"
	"github.com/corralhq/corral/internal/heldwrite"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corralhq/corral"
)

// Limits of the File tool.
const (
	DefaultMaxReadBytes = 1 << 20
	DefaultMaxListItems = 1000
)

// protectedNames are identity files the File tool never writes, in any
// directory and in any letter case. This is an application rule, not a
// security boundary: a sandboxed shell can still write them unless they are
// also listed in corral.Config.ReadOnlyPaths.
var protectedNames = []string{"SOUL.md", "IDENTITY.md", "USER.md"}

// IsProtectedFile reports whether File refuses to write a file named like
// the last element of p.
func IsProtectedFile(p string) bool {
	base := filepath.Base(p)
	return slices.ContainsFunc(protectedNames, func(n string) bool { return strings.EqualFold(base, n) })
}

// File reads, writes and lists files inside a workspace. It works in the
// calling process, without a sandbox, so it enforces the workspace boundary
// itself: every path is canonicalized and must resolve inside the
// workspace, symlinks are refused, and the I/O goes through an os.Root on
// the workspace so that a path swapped for a symlink after the check still
// cannot lead outside.
type File struct {
	ws workspace
	sb *corral.Sandbox // NewFileFor's: whose protected entries Write refuses
	// MaxReadBytes is the largest file Read returns.
	MaxReadBytes int64
	// MaxListItems is the most entries List returns.
	MaxListItems int
}

// NewFile returns a File confined to the workspace dir.
func NewFile(dir string) (*File, error) {
	ws, err := newWorkspace(dir)
	if err != nil {
		return nil, err
	}
	return &File{ws: ws, MaxReadBytes: DefaultMaxReadBytes, MaxListItems: DefaultMaxListItems}, nil
}

// NewFileAt returns a File confined to the workspace dir, which the model
// sees at view inside the sandbox (corral.Sandbox.WorkspaceDir, such as
// /workspace): absolute paths inside view are taken as the same paths
// inside dir, and errors name paths as the model sees them.
func NewFileAt(dir, view string) (*File, error) {
	f, err := NewFile(dir)
	if err != nil {
		return nil, err
	}
	if f.ws, err = f.ws.withView(view); err != nil {
		return nil, err
	}
	return f, nil
}

// NewFileFor returns a File on sb's workspace that takes paths as sb's
// commands see them: the workspace at sb.WorkspaceDir(), and each of the
// sandbox's binds (corral.Config.Binds, such as an agent's workspace
// shown read-only at /agent) at its destination, its source read and
// written in its place. A path outside all of them is refused, even one
// that names a file of the workspace on the host: inside the sandbox it
// names something else. Writes to a read-only bind are refused, as are
// writes to a bind whose writes a changeset keeps, which File, writing
// from the calling process, would go around (use [SandboxFile] there), and
// writes to the sandbox's protected entries (corral.Sandbox.Protected:
// git's directory, .vscode, .mcp.json...), which the guard keeps a
// command's writes out of, with a [*PlantingError]. File does not know the
// sandbox's other rules (see the package documentation).
func NewFileFor(sb *corral.Sandbox) (*File, error) {
	if sb == nil {
		return nil, errors.New("tools: nil *corral.Sandbox")
	}
	f, err := NewFileAt(sb.Workspace(), sb.WorkspaceDir())
	if err != nil {
		return nil, err
	}
	f.ws = f.ws.withBinds(sb.Binds())
	f.sb = sb
	return f, nil
}

// Workspace returns the canonical workspace path.
func (f *File) Workspace() string { return f.ws.root }

// Read returns the content of the regular file at p.
func (f *File) Read(p string) (string, error) {
	const op = "read"
	r, err := f.ws.resolve(op, p)
	if err != nil {
		return "", err
	}
	data, err := readRegular(r, op, p, f.MaxReadBytes)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// Write replaces the file at p with content, creating it and its parent
// directories as needed.
func (f *File) Write(p, content string) error {
	const op = "write"
	r, err := f.ws.resolve(op, p)
	if err != nil {
		return err
	}
	if IsProtectedFile(r.abs) || IsProtectedFile(p) {
		return &PathError{Op: op, Path: p, Err: ErrProtected}
	}
	if r.readOnly {
		return &PathError{Op: op, Path: p, Err: ErrReadOnly}
	}
	if err := f.ws.planting(f.sb, r, op, p); err != nil {
		return err
	}
	root, rel, err := r.open()
	if err != nil {
		return &PathError{Op: op, Path: p, Err: err}
	}
	defer root.Close()
	r.rel = rel
	if dir := filepath.Dir(r.rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return &PathError{Op: op, Path: p, Err: unwrapPathErr(err)}
		}
	}
	if f.sb != nil {
		if testHookBeforeWrite != nil {
			testHookBeforeWrite()
		}
		return f.writeHeld(root, r, op, p, content)
	}
	if err := root.WriteFile(r.rel, []byte(content), 0o644); err != nil {
		return &PathError{Op: op, Path: p, Err: unwrapPathErr(err)}
	}
	return nil
}

// testHookBeforeWrite, when set by a test, runs between a guarded write's
// checks and the write: where a concurrent command would swap a path.
var testHookBeforeWrite func()

// writeHeld writes content to r as Write does, for a File on a sandbox:
// the check that r is no protected entry (planting) must hold for what is
// written, though a command may swap a directory on the way for a symlink
// meanwhile (see heldwrite.Write).
func (f *File) writeHeld(root *os.Root, r resolved, op, p, content string) error {
	var refused error
	err := heldwrite.Write(root, r.rel, []byte(content), func(target string) error {
		refused = f.ws.planting(f.sb, resolved{abs: target, lexical: target}, op, p)
		return refused
	})
	switch {
	case err == nil:
		return nil
	case refused != nil && err == refused:
		return err
	case errors.Is(err, heldwrite.ErrSymlink):
		err = ErrSymlink
	case errors.Is(err, heldwrite.ErrNotRegular):
		err = ErrNotRegular
	}
	return &PathError{Op: op, Path: p, Err: unwrapPathErr(err)}
}

// Entry is one item of a directory listing.
type Entry struct {
	Name string `json:"name"`
	Type string `json:"type"` // "file", "dir", "symlink" or "other"
	Size int64  `json:"size"`
}

// List returns the entries of the directory at p, sorted by name, and
// whether the listing was cut at MaxListItems.
func (f *File) List(p string) ([]Entry, bool, error) {
	const op = "list"
	r, err := f.ws.resolve(op, p)
	if err != nil {
		return nil, false, err
	}
	root, rel, err := r.open()
	if err != nil {
		return nil, false, &PathError{Op: op, Path: p, Err: err}
	}
	defer root.Close()
	dir, err := root.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, false, &PathError{Op: op, Path: p, Err: unwrapPathErr(err)}
	}
	defer dir.Close()
	if fi, err := dir.Stat(); err != nil || !fi.IsDir() {
		return nil, false, &PathError{Op: op, Path: p, Err: ErrNotDir}
	}
	des, err := dir.ReadDir(-1)
	if err != nil {
		return nil, false, &PathError{Op: op, Path: p, Err: unwrapPathErr(err)}
	}
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	cut := len(des) > f.MaxListItems
	if cut {
		des = des[:f.MaxListItems]
	}
	entries := make([]Entry, 0, len(des))
	for _, de := range des {
		entries = append(entries, entryOf(de))
	}
	return entries, cut, nil
}

func entryOf(de fs.DirEntry) Entry {
	e := Entry{Name: de.Name(), Type: "other"}
	switch t := de.Type(); {
	case t.IsRegular():
		e.Type = "file"
	case t.IsDir():
		e.Type = "dir"
	case t&fs.ModeSymlink != 0:
		e.Type = "symlink"
	}
	if fi, err := de.Info(); err == nil && e.Type == "file" {
		e.Size = fi.Size()
	}
	return e
}

// readRegular opens r through an os.Root on its mount and reads it,
// refusing anything but a regular file of at most limit bytes. The checks
// use the opened file, not the path, so they hold for what is actually
// read.
func readRegular(r resolved, op, p string, limit int64) ([]byte, error) {
	root, rel, err := r.open()
	if err != nil {
		return nil, &PathError{Op: op, Path: p, Err: err}
	}
	defer root.Close()
	fh, err := root.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, &PathError{Op: op, Path: p, Err: notExist(unwrapPathErr(err))}
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, &PathError{Op: op, Path: p, Err: err}
	}
	switch {
	case fi.IsDir():
		return nil, &PathError{Op: op, Path: p, Err: ErrIsDir}
	case !fi.Mode().IsRegular():
		return nil, &PathError{Op: op, Path: p, Err: ErrNotRegular}
	case fi.Size() > limit:
		return nil, &PathError{Op: op, Path: p, Err: fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, fi.Size(), limit)}
	}
	// The file may grow between Stat and the read; never read past limit.
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, &PathError{Op: op, Path: p, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, &PathError{Op: op, Path: p, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)}
	}
	return data, nil
}

// notExist gives the model a plain "does not exist" for any not-found error.
func notExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotExist
	}
	return err
}

// FileArgs are the arguments of a file tool call.
type FileArgs struct {
	// Operation is "read", "write" or "list".
	Operation string `json:"operation"`
	// Path is absolute or relative to the workspace.
	Path string `json:"path"`
	// Content is what "write" writes.
	Content string `json:"content,omitempty"`
}

// Run performs args and returns the text given back to the model.
func (f *File) Run(args FileArgs) (string, error) {
	switch args.Operation {
	case "read":
		return f.Read(args.Path)
	case "write":
		if err := f.Write(args.Path, args.Content); err != nil {
			return "", err
		}
		return fmt.Sprintf("Wrote %d bytes to %s.", len(args.Content), args.Path), nil
	case "list":
		entries, cut, err := f.List(args.Path)
		if err != nil {
			return "", err
		}
		return formatEntries(entries, cut), nil
	}
	return "", &ArgError{Field: "operation", Value: args.Operation, Reason: `want "read", "write" or "list"`}
}

func formatEntries(entries []Entry, cut bool) string {
	var b strings.Builder
	for _, e := range entries {
		switch e.Type {
		case "dir":
			fmt.Fprintf(&b, "%s/\n", e.Name)
		case "file":
			fmt.Fprintf(&b, "%s (%d bytes)\n", e.Name, e.Size)
		default:
			fmt.Fprintf(&b, "%s (%s)\n", e.Name, e.Type)
		}
	}
	if len(entries) == 0 {
		b.WriteString("(empty directory)\n")
	}
	if cut {
		fmt.Fprintf(&b, "[listing cut after %d entries]\n", len(entries))
	}
	return b.String()
}
