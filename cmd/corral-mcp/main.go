// Command corral-mcp serves corral's sandboxed tools over the Model Context
// Protocol: it is `corral mcp`, which runs it with the same arguments
// (see `corral help mcp`). It is a binary of its own because the MCP SDK
// it links (with net/http, crypto and JSON schema code) costs every
// command of a binary its package initialisation at start-up; the corral
// binary leaves it out. It must lie beside corral: `make build` builds both,
// `go install github.com/corralhq/corral/cmd/...@latest` installs both.
package main

import (
	"os"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/cli"
	"github.com/corralhq/corral/internal/mcpserve"
)

func main() {
	if corral.Init() {
		return
	}
	os.Exit(cli.MCPMain(os.Args[1:], mcpserve.Serve))
}
