package corral

import (
	"sync"

	"github.com/corralhq/corral/seatbelt"
)

var (
	probeOnce sync.Once
	probed    *host
)

// probeHostFully asks once per process whether sandbox-exec applies a
// profile: what Doctor reports. New does not need it, since the backend
// applies the real profile once when it is made.
func probeHostFully() *host {
	probeOnce.Do(func() {
		probed = &host{seatbelt: true, layers: []LayerStatus{probeSeatbelt(seatbelt.SandboxExec)}}
	})
	return probed
}
