package corral

import (
	"errors"
	"path"
	"slices"
	"strings"

	"github.com/corralhq/corral/internal/guard"
	"github.com/corralhq/corral/internal/ladder"
)

// noPlantingGuard is why the landlock rung goes without the guard of
// protected names: the guard is made of mounts.
const noPlantingGuard = "no mount namespace: git directories are not staged, and protected entries " +
	"nested in a writable root or created by the command reach the host as they are; " +
	"only those at the top of each writable root are read-only"

// withoutPlantingGuard adds the guard of protected names (LayerProtect) to
// what plan goes without when its rung cannot give it and any name is
// protected. Only the full rung stages and holds: the landlock rung
// has no mount namespace, and FallbackWarn, the only way onto it, runs
// with what is missing named.
func withoutPlantingGuard(plan *ladder.Plan, protected []string) {
	if plan.Rung == RungLandlock && len(protected) > 0 {
		plan.Without = append(plan.Without, LayerStatus{Name: LayerProtect, Reason: noPlantingGuard})
	}
}

// protectNames validates Config.Protect: each a name relative to a
// writable root, clean, with no "..", not one AllowPlanting lists. It
// returns those ProtectedNames lacks.
func protectNames(names, allow []string) ([]string, error) {
	var out []string
	for _, n := range names {
		if err := CheckProtectName(n); err != nil {
			return nil, &ConfigError{Field: "Protect", Value: n, Reason: err.Error()}
		}
		if slices.Contains(allow, n) {
			return nil, &ConfigError{Field: "Protect", Value: n, Reason: "AllowPlanting lists it too"}
		}
		if !slices.Contains(ProtectedNames(), n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// CheckProtectName says why name cannot be an entry of Config.Protect,
// or nil: an entry is a name relative to each writable root, clean
// (path.Clean leaves it as it is), without "..".
func CheckProtectName(name string) error {
	if reason := protectInvalid(name); reason != "" {
		return errors.New(reason)
	}
	return nil
}

// protectInvalid says why n is no name Protect can take, or "".
func protectInvalid(n string) string {
	switch {
	case n == "" || n == ".":
		return "want a name relative to each writable root"
	case strings.HasPrefix(n, "/"):
		return "want a name relative to each writable root, not an absolute path"
	case slices.Contains(strings.Split(n, "/"), ".."):
		return "must not hold \"..\""
	case path.Clean(n) != n:
		return "not clean (want " + path.Clean(n) + ")"
	case strings.ContainsRune(n, 0):
		return "holds a NUL byte"
	case n == guard.HeldDir:
		return "where held entries are moved to"
	case n == "*":
		return "a pattern needs the end names share (*.code-workspace)"
	case strings.HasPrefix(n, "*") && strings.Contains(n, "/"):
		return "a pattern matches a name at every depth and holds no slash"
	}
	return ""
}
