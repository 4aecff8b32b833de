// Package sandboxtest lets corral's own tests that build sandboxes skip,
// naming the reason, on a host that cannot give the sandbox they ask for: a
// kernel without Landlock or seccomp, a build on an architecture without
// generated seccomp filters, a container without user namespaces. The
// suite then stays green there and says what it did not run, instead of
// failing in every test that spawns.
//
// Where the host is expected to run sandboxes (CI), CORRAL_REQUIRE_SANDBOX=1
// turns each such skip into a failure, so a broken host cannot pass the
// suite by skipping it.
//
// A test that means to check what happens without a layer switches it off
// with internal/testhook instead and does not skip.
package sandboxtest

import (
	"testing"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/hosttest"
)

// Unavailable returns why a sandbox built from cfg cannot run on this host,
// on the rungs cfg.Fallback allows, or "" when it can. Paths in cfg are not
// looked at. The host is probed once per process.
func Unavailable(cfg corral.Config) string {
	r, err := corral.Doctor(cfg)
	if err != nil {
		return "" // an invalid cfg is for the test itself to notice
	}
	if !r.OK {
		return "this host cannot build the sandbox: " + r.Problem
	}
	return ""
}

// Require skips t when a sandbox built from cfg cannot run on this host,
// or fails it when CORRAL_REQUIRE_SANDBOX=1 (see [hosttest.Skip]).
func Require(t testing.TB, cfg corral.Config) {
	t.Helper()
	if why := Unavailable(cfg); why != "" {
		hosttest.Skip(t, why)
	}
}
