// Package environ holds corral's one definition of setting a variable in
// an environment list ("NAME=value" entries).
package environ

import "strings"

// Set returns env with kv ("NAME=value", or a bare "NAME") set: in place of
// the first entry of the same name, or appended when there is none. Every
// further entry of the name goes: programs disagree on which of two
// duplicates counts, so none may survive. env itself is left alone.
func Set(env []string, kv string) []string {
	name, _, _ := strings.Cut(kv, "=")
	out := make([]string, 0, len(env)+1)
	set := false
	for _, old := range env {
		if n, _, _ := strings.Cut(old, "="); n != name {
			out = append(out, old)
		} else if !set {
			out, set = append(out, kv), true
		}
	}
	if !set {
		out = append(out, kv)
	}
	return out
}
