package cli

import (
	"github.com/spf13/cobra"
)

// newRootCmd is the corral command, run with args.
func newRootCmd(args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "corral",
		Short: "Run commands inside a kernel-enforced sandbox",
		Long: `corral runs a command with a read-only view of the host, a writable
workspace and no way to reach the caller's processes, secrets or privileges.`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.AddCommand(
		newRunCmd(),
		newBrowserCmd(),
		newLearnCmd(),
		newWhyCmd(),
		newMCPCmd(nil, func() []string { return argsAfter(args, "mcp") }),
		newProfileCmd(),
		newChangesCmd(),
		newSandboxesCmd(),
		newScanCmd(),
		newBenchCmd(),
		newDoctorCmd(),
		newPreflightCmd(),
		newVersionCmd(),
	)
	return root
}
