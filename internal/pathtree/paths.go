// Package pathtree holds corral's one definition of path containment.
package pathtree

import "strings"

// Within reports whether p is base or lies beneath it. Both are clean
// absolute paths (filepath.Clean): Within compares names, it resolves
// nothing, so a caller that needs the files behind them resolves links
// first. "/a/bc" is not within "/a/b"; everything is within "/"; nothing
// is within "" and "" is within nothing.
func Within(p, base string) bool {
	if p == "" || base == "" {
		return false
	}
	return p == base || base == "/" || strings.HasPrefix(p, base+"/")
}
