package main

import (
	"os"
	"testing"

	"github.com/corralhq/corral"
)

// cliEnv makes a re-executed test binary behave as the corral CLI, so CLI
// tests run the real command-line path without a separate build.
const cliEnv = "CORRAL_TEST_CLI"

func TestMain(m *testing.M) {
	if corral.Init() {
		return
	}
	if os.Getenv(cliEnv) != "" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}
