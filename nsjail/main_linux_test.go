package nsjail

import (
	"os"
	"testing"

	"github.com/corralhq/corral/reexec"
)

func TestMain(m *testing.M) {
	Register()
	if reexec.Dispatch() {
		return
	}
	os.Exit(m.Run())
}
