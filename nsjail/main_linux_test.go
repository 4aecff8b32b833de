package nsjail

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/corralhq/corral/internal/childcover"
	"github.com/corralhq/corral/reexec"
)

func TestMain(m *testing.M) {
	// Copies of this binary stand in for helpers of another kind (see
	// hosttest.CopySelf).
	switch {
	case strings.HasSuffix(os.Args[0], otherProtocolSuffix):
		protocolOverride = "corral-init/0 other"
	case strings.HasSuffix(os.Args[0], silentSuffix):
		for { // neither answers nor exits (a bare select{} would die as a deadlock)
			time.Sleep(time.Hour)
		}
	}
	if childcover.Init(func() bool { Register(); return reexec.Dispatch() }) {
		return
	}
	os.Exit(m.Run())
}
