package corral

import "github.com/corralhq/corral/internal/ladder"

// noPlantingGuard is why the landlock rung goes without the guard of
// protected names: the guard is made of mounts.
const noPlantingGuard = "no mount namespace: git directories are not staged, and protected entries " +
	"nested in a writable root or created by the command reach the host as they are; " +
	"only those at the top of each writable root are read-only"

// withoutPlantingGuard adds the guard of protected names (LayerProtect) to
// what plan goes without when its rung cannot give it and allow leaves any
// name protected. Only the full rung stages and holds: the landlock rung
// has no mount namespace, and FallbackWarn, the only way onto it, runs
// with what is missing named.
func withoutPlantingGuard(plan *ladder.Plan, allow []string) {
	if plan.Rung == RungLandlock && len(protectedNames(allow)) > 0 {
		plan.Without = append(plan.Without, LayerStatus{Name: LayerProtect, Reason: noPlantingGuard})
	}
}
