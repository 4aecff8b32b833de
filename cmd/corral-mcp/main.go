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
	"runtime/debug"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/cli"
	"github.com/corralhq/corral/internal/mcpserve"
)

// gcPercent is the server's garbage collection target (GOGC), unless the
// environment sets one. Its live heap is a few MiB, while the SDK's JSON
// decoding allocates a few hundred KiB per call (a 32 KiB buffer for each
// value it decodes): at the default of 100 the heap's 4 MiB floor makes a
// collection run every ten calls or so, about half the server's own CPU per
// call (BenchmarkStdioCallOverhead in mcpserver). 400 makes it every forty
// or more, for a heap of about 16 MiB.
const gcPercent = 400

func main() {
	if corral.Init() {
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(cli.MCPMain(os.Args[1:], mcpserve.Serve))
}
