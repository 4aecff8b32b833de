package preflight

import (
	"os"
	"testing"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/childcover"
)

func TestMain(m *testing.M) {
	if childcover.Init(corral.Init) {
		return
	}
	os.Exit(m.Run())
}
