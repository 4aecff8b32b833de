package bench_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/childcover"
	"github.com/corralhq/corral/internal/cli"
	"github.com/corralhq/corral/internal/mcpserve"
)

// TestMain: this test binary is also the MCP server TestRunVsMCP starts,
// when run under corral-mcp's name (package cli imports this package, so
// this file is an external test).
func TestMain(m *testing.M) {
	if childcover.Init(corral.Init) {
		return
	}
	if filepath.Base(os.Args[0]) == "corral-mcp" {
		os.Exit(cli.MCPMain(os.Args[1:], mcpserve.Serve))
	}
	os.Exit(m.Run())
}
