// Command corral runs commands inside a kernel-enforced sandbox.
//
// Run `corral help` for the subcommands. Exit status of `corral run` is the
// command's own; 128+N when it was killed by signal N; 127 when it was not
// found; 126 when it could not be executed; 125 when the sandbox could not
// be set up; 2 for a usage error. `corral mcp` runs corral-mcp (see
// cmd/corral-mcp), which must lie beside this binary.
package main

import (
	"os"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/cli"
)

func main() {
	if corral.Init() {
		return
	}
	os.Exit(cli.Main(os.Args[1:]))
}
