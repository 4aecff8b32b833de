package zones

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"syscall"
)

// Op is a kind of change a worker asks to make.
type Op string

const (
	// OpWrite creates or changes a file or directory.
	OpWrite Op = "write"
	// OpDelete removes one.
	OpDelete Op = "delete"
)

// Request is one change shown to an Approver.
type Request struct {
	Op Op `json:"op"`
	// Path is the path the worker sees: /NAME/rel/path.
	Path string `json:"path"`
	// Diff is a unified diff of a text file's change, empty for a binary
	// file, a directory or a deletion.
	Diff string `json:"diff,omitempty"`
	// Size is the file's size after a write, before a deletion.
	Size int64 `json:"size"`
	// Dir says the path is a directory.
	Dir bool `json:"dir,omitempty"`
	// Target is a new symlink's target, quoted when unsafe to print.
	Target string `json:"target,omitempty"`
	// Executable says the change leaves an executable file that was not
	// one before.
	Executable bool `json:"executable,omitempty"`
}

// Approver decides on changes a zone's "ask" policy holds back. It is the
// caller's: a person at a terminal, a reviewing agent, a rule. Approve
// returns whether the change may be made; an error refuses it too.
type Approver interface {
	Approve(ctx context.Context, r Request) (bool, error)
}

// ApproverFunc is an Approver from a function.
type ApproverFunc func(ctx context.Context, r Request) (bool, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, r Request) (bool, error) { return f(ctx, r) }

// Decision is what a zone's policy says about a change.
type Decision int

const (
	// Allow: make the change.
	Allow Decision = iota
	// NeedsApproval: ask the Approver first.
	NeedsApproval
)

// Errors a worker sees, in the words of an ordinary file system; none of
// them mentions how its access is organised.
var (
	// ErrBlocked refuses a change the policy blocks.
	ErrBlocked = &policyError{"operation not permitted"}
	// ErrRefused refuses a change the Approver did not approve.
	ErrRefused = &policyError{"permission denied: the change was not approved"}
)

type policyError struct{ msg string }

func (e *policyError) Error() string { return e.msg }

// Is makes a refusal a permission error, as a file system's would be.
func (e *policyError) Is(target error) bool { return target == fs.ErrPermission }

// Split parses a worker's path into a zone name and a relative path inside
// it: "/" gives ("", "."), "/data" gives ("data", "."). The path must be
// absolute; ".." cannot climb above "/".
func Split(p string) (name, rel string, err error) {
	if !path.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", "", &fs.PathError{Op: "resolve", Path: p, Err: fs.ErrInvalid}
	}
	p = path.Clean(p)
	if p == "/" {
		return "", ".", nil
	}
	name, rel, _ = strings.Cut(p[1:], "/")
	if rel == "" {
		rel = "."
	}
	return name, rel, nil
}

// Decide says what op on the worker's path p needs: Allow, NeedsApproval,
// or an error: the path is outside every zone (no such file), the zone or
// the top "/" is read-only (read-only file system), or the policy blocks
// op (operation not permitted). fsOp names the operation in the error.
func (a *Access) Decide(op Op, fsOp, p string) (Decision, error) {
	name, rel, err := Split(p)
	if err != nil {
		return 0, err
	}
	if name == "" {
		return 0, &fs.PathError{Op: fsOp, Path: p, Err: syscall.EROFS}
	}
	z, ok := a.Zone(name)
	if !ok && rel == "." {
		// A new name at the top: "/" itself is read-only.
		return 0, &fs.PathError{Op: fsOp, Path: p, Err: syscall.EROFS}
	}
	if !ok {
		return 0, &fs.PathError{Op: fsOp, Path: p, Err: syscall.ENOENT}
	}
	if z.Mode != ReadWrite || (rel == "." && op == OpDelete) {
		// The zone's own directory cannot go: it is a mount point.
		return 0, &fs.PathError{Op: fsOp, Path: p, Err: syscall.EROFS}
	}
	switch z.Approval.For(op) {
	case PreApproved:
		return Allow, nil
	case Ask:
		return NeedsApproval, nil
	}
	return 0, &fs.PathError{Op: fsOp, Path: p, Err: ErrBlocked}
}

// Authorize decides r and, when the policy asks, asks ap. A nil ap refuses
// every change that needs approval: consent is never assumed.
func (a *Access) Authorize(ctx context.Context, ap Approver, fsOp string, r Request) error {
	d, err := a.Decide(r.Op, fsOp, r.Path)
	if err != nil || d == Allow {
		return err
	}
	if ap == nil {
		return &fs.PathError{Op: fsOp, Path: r.Path, Err: ErrRefused}
	}
	ok, err := ap.Approve(ctx, r)
	if err != nil {
		return &fs.PathError{Op: fsOp, Path: r.Path, Err: errors.Join(ErrRefused, err)}
	}
	if !ok {
		return &fs.PathError{Op: fsOp, Path: r.Path, Err: ErrRefused}
	}
	return nil
}
