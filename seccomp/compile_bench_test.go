//go:build linux && cgo && libseccomp

package seccomp

import "testing"

// BenchmarkCompile is what a Sandbox pays once, in New, on an architecture
// without generated programs: the policy turned into BPF by libseccomp.
// Spawns load the result as it is.
func BenchmarkCompile(b *testing.B) {
	rules := Policy(Options{})
	for b.Loop() {
		if _, err := Compile(rules); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPolicy builds the rule list, the pure part.
func BenchmarkPolicy(b *testing.B) {
	for b.Loop() {
		Policy(Options{AllowUnixSockets: true})
	}
}
