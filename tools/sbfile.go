package tools

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/corralhq/corral"
)

// SandboxFile reads, writes, edits and lists files inside the workspace
// like [File], but does its I/O inside the sandbox, through small
// coreutils commands: what it may touch is what a shell command may touch,
// decided by the kernel. Paths hidden, read-only or protected inside the
// workspace stay so, a changeset gets the writes and shows its own view,
// and refusals are the kernel's ("Read-only file system", "Permission
// denied"). Paths are still resolved against the workspace first, for the
// plain "outside the workspace" refusal. It is safe for concurrent use.
//
// Each operation costs one sandboxed command (Edit two: a read and a
// write). A write truncates and rewrites the file in place, as `cat >`
// does; an edit is a read followed by a write, so a change made to the
// file between the two is lost. List needs GNU find (its -printf).
type SandboxFile struct {
	r *runner
	// MaxReadBytes is the largest file Read returns.
	MaxReadBytes int64
	// MaxListItems is the most entries List returns.
	MaxListItems int
}

// NewSandboxFile returns a SandboxFile working in sb's workspace.
func NewSandboxFile(sb *corral.Sandbox) (*SandboxFile, error) {
	if sb != nil && sb.NoWorkspace() {
		return nil, errors.New("tools: the sandbox has no workspace for file tools to work in")
	}
	r, err := newRunner(sb, Options{})
	if err != nil {
		return nil, err
	}
	return &SandboxFile{r: r, MaxReadBytes: DefaultMaxReadBytes, MaxListItems: DefaultMaxListItems}, nil
}

// Workspace returns the canonical workspace path.
func (f *SandboxFile) Workspace() string { return f.r.ws.root }

// The scripts take their paths as positional parameters, never spliced
// into the script text. Their own refusals are one line on stderr.
const (
	readScript = `[ -d "$1" ] && { echo "is a directory" >&2; exit 1; }
[ -e "$1" ] && [ ! -f "$1" ] && { echo "not a regular file" >&2; exit 1; }
exec head -c "$2" -- "$1"`
	writeScript = `d=$(dirname -- "$1") && mkdir -p -- "$d" && exec cat > "$1"`
	listScript  = `[ -d "$1" ] || { [ -e "$1" ] && echo "not a directory" >&2 || echo "No such file or directory" >&2; exit 1; }
exec find "$1" -mindepth 1 -maxdepth 1 -printf '%y %s %P\0'`
)

// Read returns the content of the regular file at p.
func (f *SandboxFile) Read(ctx context.Context, p string) (string, error) {
	const op = "read"
	r, err := f.r.ws.resolve(op, p)
	if err != nil {
		return "", err
	}
	out, err := f.script(ctx, op, p, readScript, "", int(f.MaxReadBytes)+1, f.r.ws.out(r.abs), strconv.FormatInt(f.MaxReadBytes+1, 10))
	if err != nil {
		return "", err
	}
	if int64(len(out)) > f.MaxReadBytes {
		return "", &PathError{Op: op, Path: p, Err: errors.Join(ErrTooLarge, errors.New("the limit is "+strconv.FormatInt(f.MaxReadBytes, 10)+" bytes"))}
	}
	return out, nil
}

// Write replaces the file at p with content, creating it and its parent
// directories as needed.
func (f *SandboxFile) Write(ctx context.Context, p, content string) error {
	const op = "write"
	r, err := f.r.ws.resolve(op, p)
	if err != nil {
		return err
	}
	if IsProtectedFile(r.abs) || IsProtectedFile(p) {
		return &PathError{Op: op, Path: p, Err: ErrProtected}
	}
	if err := f.r.ws.planting(f.r.sb, r, op, p); err != nil {
		return err
	}
	_, err = f.script(ctx, op, p, writeScript, content, 0, f.r.ws.out(r.abs))
	return err
}

// Edit replaces old by new in the file at p, where old must occur exactly
// once (see [ReplaceUnique]).
func (f *SandboxFile) Edit(ctx context.Context, p, old, new string) error {
	if IsProtectedFile(p) {
		return &PathError{Op: "edit", Path: p, Err: ErrProtected}
	}
	if r, err := f.r.ws.resolve("edit", p); err == nil {
		if err := f.r.ws.planting(f.r.sb, r, "edit", p); err != nil {
			return err
		}
	}
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

// List returns the entries of the directory at p, sorted by name, and
// whether the listing was cut at MaxListItems.
func (f *SandboxFile) List(ctx context.Context, p string) ([]Entry, bool, error) {
	const op = "list"
	r, err := f.r.ws.resolve(op, p)
	if err != nil {
		return nil, false, err
	}
	out, err := f.script(ctx, op, p, listScript, "", 64<<20, f.r.ws.out(r.abs))
	if err != nil {
		return nil, false, err
	}
	entries := parseFind(out)
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	cut := len(entries) > f.MaxListItems
	if cut {
		entries = entries[:f.MaxListItems]
	}
	return entries, cut, nil
}

// parseFind reads find's "%y %s %P\0" records.
func parseFind(out string) []Entry {
	var entries []Entry
	for rec := range strings.SplitSeq(out, "\x00") {
		typ, rest, ok := strings.Cut(rec, " ")
		if !ok {
			continue
		}
		size, name, ok := strings.Cut(rest, " ")
		if !ok || name == "" {
			continue
		}
		e := Entry{Name: name, Type: "other"}
		switch typ {
		case "f":
			e.Type = "file"
			e.Size, _ = strconv.ParseInt(size, 10, 64)
		case "d":
			e.Type = "dir"
		case "l":
			e.Type = "symlink"
		}
		entries = append(entries, e)
	}
	return entries
}

// FormatEntries renders entries as List's text for the model.
func FormatEntries(entries []Entry, cut bool) string { return formatEntries(entries, cut) }

// script runs script with args in the sandbox, in the workspace, and
// returns its stdout; a failure is a *PathError with the last line the
// command printed on stderr, trimmed to the reason.
func (f *SandboxFile) script(ctx context.Context, op, p, script, stdin string, limit int, args ...string) (string, error) {
	out, err := f.r.run(ctx, invocation{
		name:    "sh",
		args:    append([]string{"-c", script, "sh"}, args...),
		dir:     f.r.ws.root,
		env:     []string{"LC_ALL=C"},
		timeout: f.r.opts.DefaultTimeout,
		stdin:   stdin,
		limit:   limit,
	})
	if err != nil {
		return "", err
	}
	if out.TimedOut {
		return "", &PathError{Op: op, Path: p, Err: errors.New("timed out")}
	}
	if !out.Success {
		return "", &PathError{Op: op, Path: p, Err: reason(out.Stderr, out.ExitCode)}
	}
	return out.Stdout, nil
}

// reason turns a coreutils message ("head: cannot open 'x' for reading:
// Permission denied") into its last part, mapped to this package's errors
// where one fits.
func reason(stderr string, code int) error {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	msg := strings.TrimSpace(lines[len(lines)-1])
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	switch msg {
	case "":
		return errors.New("failed with exit status " + strconv.Itoa(code))
	case "No such file or directory":
		return ErrNotExist
	case ErrIsDir.Error(), "Is a directory":
		return ErrIsDir
	case ErrNotRegular.Error():
		return ErrNotRegular
	case ErrNotDir.Error(), "Not a directory":
		return ErrNotDir
	}
	return errors.New(msg)
}
