package corral

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if Init() {
		return
	}
	os.Exit(m.Run())
}
