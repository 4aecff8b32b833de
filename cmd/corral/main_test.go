package main

import (
	"os"
	"strings"
	"testing"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/childcover"
	"github.com/corralhq/corral/internal/testhook"
)

// cliEnv makes a re-executed test binary behave as the corral CLI, so CLI
// tests run the real command-line path without a separate build.
const cliEnv = "CORRAL_TEST_CLI"

// cliDisableEnv names layers (comma-separated) the CLI under test takes as
// missing, to force a lower rung; it exists in this test binary only.
const cliDisableEnv = "CORRAL_TEST_CLI_DISABLE"

func TestMain(m *testing.M) {
	if childcover.Init(corral.Init) {
		return
	}
	if os.Getenv(cliEnv) != "" {
		if v := os.Getenv(cliDisableEnv); v != "" {
			testhook.Disable(strings.Split(v, ",")...)
		}
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}
