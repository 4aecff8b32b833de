package ladder

import (
	"os"
	"testing"

	"github.com/corralhq/corral/internal/childcover"
	"github.com/corralhq/corral/nsjail"
	"github.com/corralhq/corral/reexec"
)

// TestMain lets the namespace probe re-execute this test binary as its
// child, as corral.Init does in a program.
func TestMain(m *testing.M) {
	if childcover.Init(func() bool { nsjail.Register(); return reexec.Dispatch() }) {
		return
	}
	os.Exit(m.Run())
}
