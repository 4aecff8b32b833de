// Package hosttest decides what a test does on a host that lacks a kernel
// feature it needs: skip, naming the reason, or, where the host is expected
// to have everything (CI sets CORRAL_REQUIRE_SANDBOX=1), fail. It imports
// nothing of corral, so every package's tests can use it.
package hosttest

import (
	"fmt"
	"os"
	"testing"
)

// RequireEnv names the environment variable that turns Skip into a failure.
const RequireEnv = "CORRAL_REQUIRE_SANDBOX"

// Required reports whether the host is expected to run every sandbox test.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Skip skips t because the host lacks what it needs, or fails it when
// Required.
func Skip(t testing.TB, why string) {
	t.Helper()
	if Required() {
		t.Fatal(why + " (" + RequireEnv + "=1: this host must run it)")
	}
	t.Skip(why)
}

// Skipf is Skip with a format.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	Skip(t, fmt.Sprintf(format, args...))
}
