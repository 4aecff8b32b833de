package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// The functions in this file are for the system itself (installing tools,
// housekeeping), never for a model: they run on the host with the caller's
// full access and environment, and apply no workspace boundary. Never
// register them as tools an agent can call.

// Result is what an unsandboxed command did.
type Result struct {
	ExitCode int
	Stdout   string
	Stderr   string
}

// Success reports whether the command exited with status 0.
func (r *Result) Success() bool { return r.ExitCode == 0 }

// Format renders the result as text.
func (r *Result) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Exit code: %d\n", r.ExitCode)
	writeStream(&b, "stdout", r.Stdout)
	writeStream(&b, "stderr", r.Stderr)
	return b.String()
}

// unsandboxedWaitDelay bounds how long an unsandboxed command's output is
// awaited after it was killed, in case something it started holds the pipes.
const unsandboxedWaitDelay = 5 * time.Second

// UnsandboxedShell runs command with `sh -c` on the host, in dir (empty
// means the current directory), with the caller's environment. When ctx is
// done the command's whole process group is killed. Not for model-facing
// use: it bypasses the sandbox.
func UnsandboxedShell(ctx context.Context, command, dir string) (*Result, error) {
	return UnsandboxedExec(ctx, "sh", []string{"-c", command}, dir)
}

// UnsandboxedExec runs program with args on the host, in dir, with the
// caller's environment. A non-zero exit is reported in the Result, not as an
// error. Not for model-facing use: it bypasses the sandbox.
func UnsandboxedExec(ctx context.Context, program string, args []string, dir string) (*Result, error) {
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ownProcessGroup(cmd)
	cmd.WaitDelay = unsandboxedWaitDelay
	err := cmd.Run()
	res := &Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("%s: %w", program, ctx.Err())
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		return nil, err
	}
	return res, nil
}

// UnsandboxedReadFile reads any file the caller can read. Not for
// model-facing use: it applies no workspace boundary.
func UnsandboxedReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// UnsandboxedWriteFile writes any file the caller can write, creating it
// with mode 0644. Not for model-facing use: it applies no workspace
// boundary and no identity-file protection.
func UnsandboxedWriteFile(path string, data []byte) error {
	return os.WriteFile(path, data, 0o644)
}

// UnsandboxedListDir lists any directory the caller can read. Not for
// model-facing use: it applies no workspace boundary.
func UnsandboxedListDir(path string) ([]os.DirEntry, error) { return os.ReadDir(path) }
