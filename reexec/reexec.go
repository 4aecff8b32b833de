// Package reexec dispatches hidden entrypoints of a binary that re-executes
// itself.
//
// A program registers named entrypoints at start-up and calls [Dispatch] first
// thing in main. When os.Args[1] names a registered entrypoint, Dispatch runs
// it and reports true; the program must then return without doing anything
// else. Names start with "__" so they never collide with user-facing
// subcommands and stay out of help output.
//
// The registry knows nothing about sandboxes: it maps names to functions.
//
// # When not to use it
//
// Entrypoints run after every package init() of the binary. Anything that must
// happen before the Go runtime starts threads (unshare of a user namespace, for
// example) cannot be done here.
//
// This package is an implementation part of corral, top-level so its
// design can be read and tested on its own. It carries no compatibility
// promise: its API changes with corral's needs. Programs use package
// corral.
package reexec

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// Entrypoint is the body of a hidden child mode. args are the arguments after
// the entrypoint's name. Its return value is the process exit status.
type Entrypoint func(args []string) int

var (
	mu      sync.RWMutex
	entries = map[string]Entrypoint{}
)

// Register adds a hidden entrypoint. It panics when name is already taken, is
// not prefixed with "__" or looks like a path: misuse fails at start-up, not at
// the first spawn.
func Register(name string, fn Entrypoint) {
	if !strings.HasPrefix(name, "__") || strings.ContainsAny(name, "/\\ \t") {
		panic(fmt.Sprintf("reexec: invalid entrypoint name %q", name))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := entries[name]; dup {
		panic(fmt.Sprintf("reexec: entrypoint %q registered twice", name))
	}
	entries[name] = fn
}

// Lookup returns the entrypoint registered under name (for the test
// coverage of re-executed children, internal/childcover).
func Lookup(name string) (Entrypoint, bool) {
	mu.RLock()
	defer mu.RUnlock()
	fn, ok := entries[name]
	return fn, ok
}

// Dispatch runs the entrypoint named by os.Args[1], if any, and exits the
// process with its status. It returns false when the process is not a hidden
// child, so main carries on.
func Dispatch() bool {
	if len(os.Args) < 2 {
		return false
	}
	fn, ok := Lookup(os.Args[1])
	if !ok {
		return false
	}
	os.Exit(fn(os.Args[2:]))
	return true // unreachable
}

// Self is the path a process uses to re-execute its own binary. It stays valid
// when the file on disk is replaced or deleted while the process runs.
const Self = "/proc/self/exe"
