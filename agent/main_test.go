package agent

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
	if os.Getenv(registryChildEnv) != "" {
		os.Exit(registryChild())
	}
	os.Exit(m.Run())
}
