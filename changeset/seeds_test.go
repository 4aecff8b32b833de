package changeset

import (
	"testing"

	"github.com/corralhq/corral/internal/fuzzseed"
)

// TestFuzzSeeds writes an archive Export made as a seed of FuzzImport
// (scripts/fuzz-corpus.sh).
func TestFuzzSeeds(t *testing.T) {
	fuzzseed.Enabled(t)
	fuzzseed.Write(t, "FuzzImport", "corral-export", exportedSample(t))
}
