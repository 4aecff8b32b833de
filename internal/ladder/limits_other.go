//go:build !linux

package ladder

import "github.com/corralhq/corral/limits"

// LimitHostOf is what the host offers for limits on rung: no cgroups.
func LimitHostOf(rung Rung, _ limits.Set, _ bool) LimitHost {
	return LimitHost{Rung: rung, NoCgroup: "no cgroups on this system"}
}
