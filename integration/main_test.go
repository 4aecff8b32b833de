//go:build linux

package integration

import (
	"os"
	"testing"

	"github.com/corralhq/corral"
)

func TestMain(m *testing.M) {
	if corral.Init() {
		return
	}
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role))
	}
	os.Exit(m.Run())
}
