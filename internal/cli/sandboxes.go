package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral/agent"
	"github.com/corralhq/corral/config"
)

// sandboxesFlags are what every `corral sandboxes` subcommand shares.
type sandboxesFlags struct {
	stateDir   string
	configFile string
}

func newSandboxesCmd() *cobra.Command {
	var f sandboxesFlags
	cmd := &cobra.Command{
		Use:   "sandboxes",
		Short: "List, remove, prune or recreate the persistent sandboxes",
		Long: `The persistent sandboxes of a state directory ($XDG_STATE_HOME/corral by
default): those of agents' sessions (package agent), of 'corral run --scope'
and, of kind browser, of 'corral browser --scope' (key browser:KEY).
Each keeps its own workspace, the changes to its layered home and its /tmp.
prune removes those idle longer than their agent's prune_idle or older than
its prune_max_age (24h and 7 days unless --config says otherwise).`,
		Args: cobra.NoArgs,
	}
	fl := cmd.PersistentFlags()
	fl.StringVar(&f.stateDir, "state-dir", "", "the state `DIR` (default: $XDG_STATE_HOME/corral)")
	fl.StringVar(&f.configFile, "config", "", "the agents' TOML `FILE`, for their prune rules and state_dir")
	cmd.AddCommand(f.listCmd(), f.rmCmd(), f.pruneCmd(), f.recreateCmd())
	return cmd
}

// runtime opens the state directory.
func (f *sandboxesFlags) runtime() (*agent.Runtime, error) {
	cfg := &config.Config{}
	if f.configFile != "" {
		var err error
		if cfg, err = config.Load(f.configFile); err != nil {
			return nil, configUsageError("%v", err)
		}
	}
	rt, err := agent.New(cfg, agent.Options{StateDir: f.stateDir})
	if err != nil {
		return nil, &exitError{code: exitSetup, msg: err.Error()}
	}
	return rt, nil
}

func (f *sandboxesFlags) listCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the persistent sandboxes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rt, err := f.runtime()
			if err != nil {
				return err
			}
			es, err := rt.Registry().List()
			if err != nil {
				return &exitError{code: exitSetup, msg: err.Error()}
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), es)
			}
			printEntries(cmd.OutOrStdout(), es, time.Now())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printJSON(w io.Writer, es []agent.Entry) error {
	if es == nil {
		es = []agent.Entry{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(es)
}

func printEntries(w io.Writer, es []agent.Entry, now time.Time) {
	if len(es) == 0 {
		fmt.Fprintln(w, "no persistent sandboxes")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tKIND\tAGENT\tCREATED\tLAST USED\tSTATE")
	for _, e := range es {
		state := "ok"
		if e.Stale {
			state = "stale"
		}
		agentID := e.Agent
		if agentID == "" {
			agentID = "-"
		}
		kind := e.Kind
		if kind == "" {
			kind = "sandbox"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s ago\t%s ago\t%s\n", e.Key, kind, agentID,
			now.Sub(e.Created).Round(time.Second), now.Sub(e.LastUsed).Round(time.Second), state)
	}
	tw.Flush()
}

func (f *sandboxesFlags) rmCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "rm KEY... | --all",
		Short: "Remove persistent sandboxes and their state",
		RunE: func(cmd *cobra.Command, keys []string) error {
			if all == (len(keys) > 0) {
				return configUsageError("rm: give KEY... or --all")
			}
			rt, err := f.runtime()
			if err != nil {
				return err
			}
			if all {
				es, err := rt.Registry().List()
				if err != nil {
					return &exitError{code: exitSetup, msg: err.Error()}
				}
				for _, e := range es {
					keys = append(keys, e.Key)
				}
			}
			for _, k := range keys {
				if err := rt.Remove(k); err != nil {
					return &exitError{code: 1, msg: err.Error()}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", k)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "remove every persistent sandbox")
	return cmd
}

func (f *sandboxesFlags) pruneCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "prune",
		Short: "Remove the sandboxes idle or old enough, now",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rt, err := f.runtime()
			if err != nil {
				return err
			}
			removed, err := rt.Prune()
			for _, e := range removed {
				fmt.Fprintf(cmd.OutOrStdout(), "pruned %s\n", e.Key)
			}
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			return nil
		},
	}
}

func (f *sandboxesFlags) recreateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "recreate KEY",
		Short: "Discard a sandbox's home and /tmp: its next use starts afresh",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := f.runtime()
			if err != nil {
				return err
			}
			if err := rt.Recreate(args[0]); err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "recreated %s\n", args[0])
			return nil
		},
	}
}
