package tools

import (
	"errors"
	"fmt"
)

// Reasons a tool refuses a path; a *PathError wraps one of them, so callers
// test with errors.Is.
var (
	ErrOutsideWorkspace = errors.New("outside the workspace")
	ErrSymlink          = errors.New("is a symbolic link, which the file tools do not follow")
	ErrProtected        = errors.New("is a protected identity file and cannot be written")
	ErrNotDir           = errors.New("not a directory")
	ErrIsDir            = errors.New("is a directory")
	ErrNotRegular       = errors.New("not a regular file")
	ErrTooLarge         = errors.New("file too large")
	ErrNotExist         = errors.New("does not exist")
	ErrReadOnly         = errors.New("read-only file system")
)

// ErrDangerousEnv is wrapped by the *EnvError Exec returns for a variable that
// changes how programs load code.
var ErrDangerousEnv = errors.New("changes how programs load code")

// PathError reports a path a tool refused or could not use. Its message is
// meant to be shown to the model as is.
type PathError struct {
	Op        string // "working_dir", "read", "write", "list", "send_file"
	Path      string // the path as the caller gave it
	Resolved  string // the canonical path, when it differs and is known
	Workspace string // set when Err is ErrOutsideWorkspace
	Err       error
}

func (e *PathError) Error() string {
	msg := fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err)
	if e.Resolved != "" && e.Resolved != e.Path {
		msg += fmt.Sprintf(" (resolves to %s)", e.Resolved)
	}
	if errors.Is(e.Err, ErrOutsideWorkspace) {
		msg += fmt.Sprintf("; paths must be inside the workspace %s", e.Workspace)
	}
	return msg
}

func (e *PathError) Unwrap() error { return e.Err }

// ArgError reports a tool argument that cannot be used. Field is the
// argument's name as the model sees it (the JSON name).
type ArgError struct {
	Field  string
	Value  string
	Reason string
}

func (e *ArgError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("invalid %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("invalid %s %q: %s", e.Field, e.Value, e.Reason)
}

// EnvError reports an environment variable Exec refuses to set.
type EnvError struct {
	Name string
	Err  error
}

func (e *EnvError) Error() string {
	return fmt.Sprintf("env %s: refused: %v (library or module injection)", e.Name, e.Err)
}

func (e *EnvError) Unwrap() error { return e.Err }
