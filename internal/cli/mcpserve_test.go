package cli_test

import (
	"github.com/corralhq/corral/internal/cli"
	"github.com/corralhq/corral/internal/mcpserve"
)

// This test binary serves corral-mcp through the same Serve as
// cmd/corral-mcp (see TestMain).
func init() { cli.SetServeForTest(mcpserve.Serve) }
