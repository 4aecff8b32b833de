package tools

import (
	"context"
	"strings"

	"github.com/corralhq/corral"
)

// ShellArgs are the arguments of a shell tool call.
type ShellArgs struct {
	// Command is run by `sh -c`.
	Command string `json:"command"`
	// WorkingDir is absolute or relative to the workspace, and must lie
	// inside it; empty means the workspace.
	WorkingDir string `json:"working_dir,omitempty"`
	// TimeoutSeconds of 0 means Options.DefaultTimeout.
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
	// Stdin is written to the command's standard input; empty gives it
	// an empty input (end of file at once).
	Stdin string `json:"stdin,omitempty"`
}

// Shell runs shell commands inside a sandbox. The sandbox, not the command
// text, decides what a command can touch, so Shell does not inspect
// commands. It is safe for concurrent use.
type Shell struct{ r *runner }

// NewShell returns a Shell that runs commands in sb, whose workspace is the
// default working directory and the boundary for WorkingDir.
func NewShell(sb *corral.Sandbox, opts Options) (*Shell, error) {
	r, err := newRunner(sb, opts)
	if err != nil {
		return nil, err
	}
	return &Shell{r: r}, nil
}

// Run runs args.Command with `sh -c` in the sandbox. It returns an error
// (*ArgError, *PathError, or one wrapping a corral error) only when the
// command did not run or ctx was cancelled; a failing or timed-out command
// is reported in the output.
func (s *Shell) Run(ctx context.Context, args ShellArgs) (*ShellOutput, error) {
	if strings.TrimSpace(args.Command) == "" {
		return nil, &ArgError{Field: "command", Reason: "empty"}
	}
	if strings.ContainsRune(args.Command, 0) {
		return nil, &ArgError{Field: "command", Reason: "contains a NUL byte"}
	}
	dir, err := s.r.dir(args.WorkingDir)
	if err != nil {
		return nil, err
	}
	timeout, err := s.r.timeout(args.TimeoutSeconds)
	if err != nil {
		return nil, err
	}
	return s.r.run(ctx, invocation{
		name: "sh", args: []string{"-c", args.Command}, dir: dir, timeout: timeout, stdin: args.Stdin,
	})
}
