package nsjail

import (
	"os"
	"testing"

	"github.com/corralhq/corral/internal/childcover"
	"github.com/corralhq/corral/reexec"
)

func TestMain(m *testing.M) {
	if childcover.Init(func() bool { Register(); return reexec.Dispatch() }) {
		return
	}
	os.Exit(m.Run())
}
