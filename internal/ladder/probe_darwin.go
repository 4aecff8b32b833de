package ladder

import (
	"sync"

	"github.com/corralhq/corral/seatbelt"
)

var (
	probeOnce sync.Once
	probed    *Host
)

// ProbeFully asks once per process whether sandbox-exec applies a
// profile: what Doctor reports. New does not need it, since the backend
// applies the real profile once when it is made.
func ProbeFully() *Host {
	probeOnce.Do(func() {
		probed = &Host{Seatbelt: true, Layers: []LayerStatus{ProbeSeatbelt(seatbelt.SandboxExec)}}
	})
	return probed
}
