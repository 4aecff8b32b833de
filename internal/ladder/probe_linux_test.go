package ladder

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The host is probed once per process: New and Doctor after the first ask
// nothing of the kernel.
func TestProbeIsCachedPerProcess(t *testing.T) {
	assert.Same(t, Probe(), Probe())
	assert.Same(t, ProbeFully(), ProbeFully())
}

// The full probe runs the namespace probe in a re-executed child and names
// every layer New and Doctor report, each with a reason when it is missing.
func TestProbeFullyNamesEveryLayer(t *testing.T) {
	h := ProbeFully()
	var names []Layer
	for _, l := range h.Layers {
		names = append(names, l.Name)
		if !l.Available {
			assert.NotEmpty(t, l.Reason, "%s", l.Name)
		}
	}
	assert.Equal(t, []Layer{LayerUserNS, LayerMountNS, LayerPIDNS, LayerKernelNS, LayerNetNS, LayerProc, LayerOverlay, LayerLandlock, LayerSeccomp}, names)
}
