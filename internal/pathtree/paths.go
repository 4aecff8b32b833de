// Package pathtree holds corral's one definition of path containment.
package pathtree

import "strings"

// Within reports whether p is base or lies beneath it. Both are clean
// paths (filepath.Clean), both absolute or both relative: Within compares
// names, it resolves nothing, so a caller that needs the files behind them
// resolves links first. "/a/bc" is not within "/a/b"; everything is within "/"; nothing
// is within "" and "" is within nothing.
func Within(p, base string) bool {
	if p == "" || base == "" {
		return false
	}
	return p == base || base == "/" || strings.HasPrefix(p, base+"/")
}

// Rel returns p relative to base ("." for base itself) when p is within
// base, by the rules of Within.
func Rel(base, p string) (string, bool) {
	switch {
	case !Within(p, base):
		return "", false
	case p == base:
		return ".", true
	case base == "/":
		return p[1:], true
	}
	return p[len(base)+1:], true
}
