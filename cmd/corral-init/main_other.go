//go:build !linux

// Command corral-init is the small binary corral's Linux sandboxes run their
// init from. Elsewhere there is no init to run.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "corral-init: Linux only: macOS sandboxes run under sandbox-exec, with no init of corral's")
	os.Exit(2)
}
