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
