// Command corral-init is the small binary corral's sandboxes can run their
// init from instead of the program that starts them.
//
// Every sandbox's PID 1 is a copy of a Go program: by default the caller's
// own binary, re-executed, which pays that binary's start-up and package
// initialisation in every sandbox. corral-init holds only the init and the
// spawner, so a sandbox starts faster and its init holds less memory. The
// corral CLI uses it when it lies next to the corral binary; a Go program
// using the library points Config.Helper (or CORRAL_HELPER) at it. It must
// be built from the same version of corral as its caller: a mismatch is a
// clear setup error, found by the first sandbox.
//
// It is started by corral only; run by hand it says so and exits 2.
package main

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/nsjail"
	"github.com/corralhq/corral/reexec"
)

func main() {
	// Started from a pinned descriptor (/proc/self/fd/N), the process
	// would otherwise be named N in top and pidof.
	name := []byte("corral-init\x00")
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0)
	nsjail.Register()
	if reexec.Dispatch() {
		return
	}
	fmt.Fprintln(os.Stderr, "corral-init: runs corral's sandboxes when corral starts it; not a command to run by hand (see corral --help)")
	os.Exit(2)
}
