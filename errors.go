package corral

import (
	"fmt"

	"github.com/corralhq/corral/internal/lookpath"
)

// ConfigError reports a Config field that cannot be used.
type ConfigError struct {
	Field  string // the Config field, e.g. "WritablePaths"
	Value  string // the offending value, if any
	Reason string
	Err    error // the underlying error, if any
}

func (e *ConfigError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("config %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("config %s: %s: %s", e.Field, e.Value, e.Reason)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// SetupError reports that the sandbox could not be built, or failed while
// its command ran. Layer names the part that failed (LayerUserNS,
// LayerMount, LayerInit, ...) and Path the file involved, when there is one.
type SetupError struct {
	Layer Layer
	Path  string
	Err   error
}

func (e *SetupError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("sandbox setup: %s: %v", e.Layer, e.Err)
	}
	return fmt.Sprintf("sandbox setup: %s %s: %v", e.Layer, e.Path, e.Err)
}

func (e *SetupError) Unwrap() error { return e.Err }

// ErrNotFound is wrapped by the error of Start when the command cannot be
// found inside the sandbox; ErrNotExecutable when it exists but cannot be
// executed.
var (
	ErrNotFound      = lookpath.ErrNotFound
	ErrNotExecutable = lookpath.ErrNotExecutable
)

// ExecError reports that the sandbox was built but the command could not be
// started in it.
type ExecError struct {
	Name string
	Err  error
}

func (e *ExecError) Error() string { return fmt.Sprintf("exec %s: %v", e.Name, e.Err) }

func (e *ExecError) Unwrap() error { return e.Err }

// ExitError is returned by Wait and Run when the command exits unsuccessfully.
type ExitError struct {
	*ProcessState
	// Stderr holds part of the standard error output when Output collected
	// it, as with os/exec.
	Stderr []byte
}

func (e *ExitError) Error() string { return e.ProcessState.String() }
