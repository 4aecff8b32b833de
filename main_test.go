package corral

import (
	"os"
	"testing"

	"github.com/corralhq/corral/internal/childcover"
)

func TestMain(m *testing.M) {
	if childcover.Init(Init) {
		return
	}
	os.Exit(m.Run())
}
