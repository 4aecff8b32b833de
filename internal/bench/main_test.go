package bench

import (
	"os"
	"testing"

	"github.com/corralhq/corral"
)

func TestMain(m *testing.M) {
	if corral.Init() {
		return
	}
	os.Exit(m.Run())
}
