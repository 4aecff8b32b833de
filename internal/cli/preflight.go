package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral/preflight"
)

func newPreflightCmd() *cobra.Command {
	var (
		asJSON                         bool
		file, id, workspace, changeset string
	)
	cmd := &cobra.Command{
		Use:   "preflight --config FILE [--agent ID] [--workspace DIR] [--changeset DIR] [--json]",
		Short: "Check that an agent can start as configured: pass or fail, every reason",
		Long: `Run every check an agent must pass before it starts, and report them all:
the config file validates (zones included); this host gives every layer the
agent's sandbox needs, without falling back; the workspace and every
writable, read-only and zone path exists with the access it needs.

Exit status: 0 when every check passed, 1 when any failed, with one line per
failed check (NAME: REASON); 2 for a usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return configUsageError("preflight needs --config FILE")
			}
			if workspace == "" {
				wd, err := os.Getwd()
				if err != nil {
					return &exitError{code: exitSetup, msg: err.Error()}
				}
				workspace = wd
			}
			r := preflight.AgentWith(cmd.Context(), preflight.AgentOptions{File: file, ID: id, Workspace: workspace, Changeset: changeset})
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return &exitError{code: 1, msg: err.Error()}
				}
			} else {
				for _, f := range r.Failures() {
					fmt.Fprintf(out, "%s: %s\n", f.Name, f.Reason)
				}
				if r.OK {
					fmt.Fprintf(out, "preflight passed: %d checks\n", len(r.Checks))
				}
			}
			if !r.OK {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print every check as JSON")
	fl.StringVar(&file, "config", "", "the agents' TOML `FILE`")
	fl.StringVar(&id, "agent", "", "the `ID` of the [[agents]] entry to check (optional when the file has one agent)")
	fl.StringVar(&workspace, "workspace", "", "the workspace `DIR` when the file leaves it to the program (default: the current directory)")
	fl.StringVar(&changeset, "changeset", "", "the changeset `DIR` corral mcp --changeset gives the agent, when its file names none")
	return cmd
}
