//go:build unix

package ladder

import "github.com/corralhq/corral/seatbelt"

// ProbeSeatbelt reports whether runner, sandbox-exec by its absolute path,
// exists and applies a profile (seatbelt.Check).
func ProbeSeatbelt(runner string) LayerStatus {
	if ok, why := seatbelt.Check(runner); !ok {
		return LayerStatus{Name: LayerSeatbelt, Reason: why}
	}
	return LayerStatus{Name: LayerSeatbelt, Available: true, Detail: runner}
}
