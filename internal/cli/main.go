// Package cli is the corral command line: the subcommands of the corral
// binary (cmd/corral) and the MCP server of corral-mcp (cmd/corral-mcp),
// which share the run flags.
//
// Run `corral help` for the subcommands. Exit status of `corral run` is the
// command's own; 128+N when it was killed by signal N; 127 when it was not
// found; 126 when it could not be executed; 125 when the sandbox could not
// be set up; 2 for a usage error.
package cli

import (
	"errors"
	"fmt"
	"os"
)

// Exit statuses of the CLI contract.
const (
	exitUsage         = 2
	exitSetup         = 125
	exitNotExecutable = 126
	exitNotFound      = 127
)

// exitError carries an exit status out of a subcommand. A non-empty msg is
// printed as one "corral: ..." line.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// Main runs the corral command with args (without the program name) and
// returns its exit status. Call corral.Init first.
func Main(args []string) int { return run(args) }

func run(args []string) int {
	root := newRootCmd(args)
	root.SetArgs(args)
	return exitCode(root.Execute())
}

// exitCode prints err, when it has something to say, and returns the exit
// status it carries.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, "corral: "+ee.msg)
		}
		return ee.code
	}
	// Anything else comes from flag or argument parsing.
	fmt.Fprintln(os.Stderr, "corral: "+err.Error())
	fmt.Fprintln(os.Stderr, "Run 'corral help' for usage.")
	return exitUsage
}
