package tools

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		out  ShellOutput
		want string
	}{
		{"success", ShellOutput{Success: true, Stdout: "hi\n"}, "Exit code: 0\n--- stdout ---\nhi\n"},
		{"both streams", ShellOutput{ExitCode: 2, Stdout: "a", Stderr: "b\n"},
			"Exit code: 2\n--- stdout ---\na\n--- stderr ---\nb\n"},
		{"no output", ShellOutput{ExitCode: 1}, "Exit code: 1\n(no output)\n"},
		{"signal", ShellOutput{ExitCode: -1, Signal: "signal killed"}, "Killed by signal killed.\n(no output)\n"},
		{"timeout", ShellOutput{ExitCode: -1, TimedOut: true, Timeout: 5 * time.Second, Stdout: "partial\n"},
			"Timed out after 5s: the command and everything it started were killed.\n--- stdout ---\npartial\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.out.Format())
		})
	}
}

func TestResultFormat(t *testing.T) {
	r := &Result{ExitCode: 3, Stderr: "oops"}
	assert.False(t, r.Success())
	assert.Equal(t, "Exit code: 3\n--- stderr ---\noops\n", r.Format())
}
