//go:build linux

package integration

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
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role))
	}
	os.Exit(m.Run())
}
