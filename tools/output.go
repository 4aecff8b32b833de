package tools

import (
	"fmt"
	"strings"
	"time"
)

// ShellOutput is what a command run by Shell or Exec did. A command that
// failed or timed out is still an output, not an error: the model needs to
// see what it printed.
type ShellOutput struct {
	// ExitCode is the command's exit status, or -1 when it was killed by a
	// signal or the timeout.
	ExitCode int `json:"exit_code"`
	// Success is true when the command exited with status 0.
	Success bool `json:"success"`
	// Signal describes the signal that ended the command, if one did.
	Signal string `json:"signal,omitempty"`
	// TimedOut is true when the timeout killed the sandbox and everything
	// running in it.
	TimedOut bool `json:"timed_out,omitempty"`
	// Timeout is the limit the command ran under.
	Timeout time.Duration `json:"-"`
	// Stdout and Stderr are the captured streams, with the middle cut out
	// (and a marker left in its place) beyond Options.MaxOutputBytes.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// StdoutCut and StderrCut count the bytes cut from each stream.
	StdoutCut int64 `json:"stdout_truncated_bytes,omitempty"`
	StderrCut int64 `json:"stderr_truncated_bytes,omitempty"`
	// Duration is how long the command ran.
	Duration time.Duration `json:"-"`
	// Refused is one line saying what the sandbox refused the command
	// (corral.Summary of Cmd.Report), or empty.
	Refused string `json:"refused,omitempty"`
}

// ExecOutput is the result of Exec, which reports the same things as Shell.
type ExecOutput = ShellOutput

// Format renders the output as the text given back to the model.
func (o *ShellOutput) Format() string {
	var b strings.Builder
	switch {
	case o.TimedOut:
		fmt.Fprintf(&b, "Timed out after %v: the command and everything it started were killed.\n", o.Timeout)
	case o.Signal != "":
		fmt.Fprintf(&b, "Killed by %s.\n", o.Signal)
	default:
		fmt.Fprintf(&b, "Exit code: %d\n", o.ExitCode)
	}
	writeStream(&b, "stdout", o.Stdout)
	writeStream(&b, "stderr", o.Stderr)
	if o.Stdout == "" && o.Stderr == "" {
		b.WriteString("(no output)\n")
	}
	if o.Refused != "" {
		fmt.Fprintf(&b, "--- sandbox ---\nThe sandbox %s. These are its rules, not errors to work around.\n", o.Refused)
	}
	return b.String()
}

func writeStream(b *strings.Builder, name, s string) {
	if s == "" {
		return
	}
	fmt.Fprintf(b, "--- %s ---\n%s", name, s)
	if !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
}
