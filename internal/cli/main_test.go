package cli

import (
	"os"
	"path/filepath"
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
		if filepath.Base(os.Args[0]) == mcpServerName {
			os.Exit(MCPMain(os.Args[1:], serveForTest))
		}
		os.Exit(run(os.Args[1:]))
	}
	code := m.Run()
	removeMCPInstall()
	os.Exit(code)
}

// serveForTest serves corral-mcp when this test binary runs as it:
// mcpserve.Serve, set by mcpserve_test.go, an external test because
// package mcpserve imports this one.
var serveForTest Serve

// SetServeForTest sets serveForTest.
func SetServeForTest(s Serve) { serveForTest = s }
