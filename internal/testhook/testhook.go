// Package testhook lets corral's own tests pretend the host lacks a sandbox
// layer, so every rung of the fallback ladder can be forced and attacked on
// one machine.
//
// It is a package variable behind Go's internal/ rule on purpose: only code
// inside the corral module can import it, so no program that embeds corral,
// no configuration file and no environment variable can switch a layer off
// in production. Tests that use it must not run in parallel with tests that
// create sandboxes expecting the real host.
package testhook

import (
	"slices"
	"sync"
)

var (
	mu       sync.Mutex
	disabled []string
)

// Disable makes the probe report the named layers (corral.LayerUserNS, ...)
// as unavailable until restore is called.
func Disable[L ~string](layers ...L) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	old := disabled
	disabled = slices.Clone(old)
	for _, l := range layers {
		disabled = append(disabled, string(l))
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		disabled = old
	}
}

// Guard names the guard that keeps a sandbox's mounts in place against
// the host (nsjail's mount watch and the check of a sandbox built ahead).
// Disable(Guard) makes sandboxes built afterwards go without it, so a test
// can show what the guard prevents.
const Guard = "mount guard"

// Ptrace names the capability the init's listener raises to reach into a
// command's process that made itself non-dumpable (its memory, its /proc
// links, its descriptors). Disable(Ptrace) makes sandboxes built
// afterwards go without it, so a test can show what it is for.
const Ptrace = "listener ptrace"

// Disabled reports whether layer is switched off.
func Disabled(layer string) bool {
	mu.Lock()
	defer mu.Unlock()
	return slices.Contains(disabled, layer)
}
