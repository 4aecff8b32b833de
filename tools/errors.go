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
	// ErrPlanting: the path is, or lies in, a protected entry of the
	// sandbox (corral.Sandbox.Protected), which a command's write would not
	// reach either. A *PlantingError names the entry.
	ErrPlanting = errors.New("refused: protected")
)

// PlantingError is a write a file tool refuses because it would write a
// protected entry of the sandbox: a name from which a program on the host
// runs code (git's config and hooks, an editor's tasks, an agent's MCP
// servers). The sandbox's guard stages, holds or refuses a command's write
// there; the tool refuses it before writing, so that it never answers
// "done" for content the guard would drop.
type PlantingError struct {
	Entry string // the protected entry, as the model sees it
	What  string // the program that runs code from it
}

func (e *PlantingError) Error() string {
	return fmt.Sprintf("%v: %s is protected (%s); the sandbox keeps it from changing what runs on the host, for commands too: "+
		"ask the user, who may allow it (allow_planting)", ErrPlanting, e.Entry, e.What)
}

func (e *PlantingError) Unwrap() error { return ErrPlanting }

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
