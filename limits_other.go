//go:build !linux

package corral

import "github.com/corralhq/corral/limits"

func limitHostOf(rung Rung, _ limits.Set, _ bool) limitHost {
	return limitHost{rung: rung, noCgroup: "no cgroups on this system"}
}
