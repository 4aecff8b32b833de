package corral

import "strings"

// passedEnv are the variables a command inherits from the caller by default.
var passedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TZ", "TMPDIR"}

// secretMarkers are substrings of variable names never passed implicitly.
var secretMarkers = []string{"KEY", "SECRET", "TOKEN", "PASSWORD"}

// defaultEnv builds the environment a command gets when Cmd.Env is nil: the
// allow-listed variables of the caller, then extra ("KEY=VALUE" sets, a bare
// "KEY" copies the caller's value).
func defaultEnv(caller, extra []string) []string {
	var env []string
	for _, kv := range caller {
		name, _, _ := strings.Cut(kv, "=")
		if implicitlyPassed(name) {
			env = append(env, kv)
		}
	}
	for _, kv := range extra {
		if strings.Contains(kv, "=") {
			env = setEnv(env, kv)
		} else if v, ok := lookup(caller, kv); ok {
			env = setEnv(env, kv+"="+v)
		}
	}
	return env
}

func implicitlyPassed(name string) bool {
	upper := strings.ToUpper(name)
	for _, m := range secretMarkers {
		if strings.Contains(upper, m) {
			return false
		}
	}
	for _, p := range passedEnv {
		if name == p {
			return true
		}
	}
	return strings.HasPrefix(name, "LC_")
}

func lookup(env []string, name string) (string, bool) {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// setEnv replaces or appends kv in env.
func setEnv(env []string, kv string) []string {
	name, _, _ := strings.Cut(kv, "=")
	for i, old := range env {
		if n, _, _ := strings.Cut(old, "="); n == name {
			env[i] = kv
			return env
		}
	}
	return append(env, kv)
}
