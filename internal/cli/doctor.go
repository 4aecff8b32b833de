package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
)

func newDoctorCmd() *cobra.Command {
	var (
		asJSON           bool
		network          string
		fallback         string
		unixSocks        bool
		configFile, name string
		reveal           []string
	)
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Show which sandbox layers this host offers and the rung run will use",
		Long: `Probe the kernel for each layer of the sandbox (namespaces, a fresh /proc,
overlayfs, Landlock, seccomp; on macOS, whether /usr/bin/sandbox-exec applies
a profile) and print whether it is available, why not when it is not, and the
rung ` + "`corral run`" + ` will use with the given policy.

With --config FILE the policy is the agent's in that file, as 'corral run
--config' would use it; --net, --fallback and --allow-unix-sockets given here
win.

Exit status: 0 when the policy can be met on this host, 1 when it cannot.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := corral.Config{
				Network:          corral.Network(network),
				Fallback:         corral.Fallback(fallback),
				AllowUnixSockets: unixSocks,
				Reveal:           reveal,
			}
			if err := doctorPolicy(cmd, &cfg, configFile, name); err != nil {
				return err
			}
			r, err := corral.Doctor(cfg)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()} // a bad flag value
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return &exitError{code: 1, msg: err.Error()}
				}
			} else {
				printReport(out, r)
			}
			if !r.OK {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fl.StringVar(&network, "net", "host", "check the policy for network host, none or allow")
	fl.StringVar(&fallback, "fallback", "fail", "check the policy for fallback fail or warn")
	fl.BoolVar(&unixSocks, "allow-unix-sockets", false, "check the policy for allowed unix sockets")
	fl.StringArrayVar(&reveal, "reveal", nil, "list the credential stores hidden by default as if `PATH` were revealed (repeatable)")
	fl.StringVar(&configFile, "config", "", "check the policy of an agent's sandbox in the TOML `FILE`")
	fl.StringVar(&name, "agent", "", "the `ID` of the [[agents]] entry to check from --config (optional when the file has one agent)")
	return cmd
}

// doctorPolicy fills cfg in from the agent's sandbox in file, where the
// command line did not say otherwise.
func doctorPolicy(cmd *cobra.Command, cfg *corral.Config, file, id string) error {
	if file == "" {
		if id != "" {
			return configUsageError("--agent needs --config")
		}
		return nil
	}
	agent, err := loadAgent(file, id)
	if err != nil {
		return err
	}
	fromFile := agent.Sandbox.CorralConfig()
	cfg.Mode = fromFile.Mode
	if !cmd.Flags().Changed("net") {
		cfg.Network = fromFile.Network
	}
	if !cmd.Flags().Changed("fallback") {
		cfg.Fallback = fromFile.Fallback
	}
	if !cmd.Flags().Changed("allow-unix-sockets") {
		cfg.AllowUnixSockets = fromFile.AllowUnixSockets
	}
	cfg.Reveal = append(fromFile.Reveal, cfg.Reveal...)
	cfg.Limits = fromFile.Limits
	cfg.AllowPlanting = fromFile.AllowPlanting
	cfg.Protect = fromFile.Protect
	return nil
}

func printReport(w io.Writer, r *corral.Report) {
	width := 0
	for _, l := range r.Layers {
		width = max(width, len(l.Name))
	}
	for _, l := range r.Layers {
		state := "available"
		switch {
		case !l.Available:
			state = "unavailable: " + l.Reason
		case l.Detail != "":
			state += " (" + l.Detail + ")"
		}
		fmt.Fprintf(w, "%-*s  %s\n", width, l.Name, state)
	}
	fmt.Fprintln(w)
	printRung(w, r)
	printLimitStatus(w, r.Limits)
	fmt.Fprintln(w)
	printHidden(w, "", r.HiddenByDefault)
}

// printLimitStatus says which limits the rung can enforce here, how, and
// why not.
func printLimitStatus(w io.Writer, ls []corral.LimitStatus) {
	if len(ls) == 0 {
		return
	}
	fmt.Fprintln(w, "\nlimits:")
	for _, l := range ls {
		state := "unavailable: " + l.Reason
		if l.Available {
			state = l.Mechanism
		}
		value := l.Value
		if value == "" {
			value = "none"
		}
		fmt.Fprintf(w, "  %-11s %-6s %s\n", l.Name, value, state)
	}
}

func printRung(w io.Writer, r *corral.Report) {
	if !r.OK && r.Rung != "" { // the rung is there, a limit asked for is not
		fmt.Fprintf(w, "rung:  %s (fallback %s), but run refuses to start\n", r.Rung, r.Fallback)
		fmt.Fprintf(w, "       %s\n", r.Problem)
		return
	}
	if !r.OK {
		fmt.Fprintf(w, "rung:  none with fallback %s: run refuses to start\n", r.Fallback)
		fmt.Fprintf(w, "       %s\n", r.Problem)
		return
	}
	line := fmt.Sprintf("rung:  %s (fallback %s)", r.Rung, r.Fallback)
	if len(r.Without) > 0 {
		line += ", without " + strings.Join(r.Without, ", ")
	}
	fmt.Fprintln(w, line)
	if r.Network != "" {
		fmt.Fprintf(w, "net:   %s\n", r.Network)
	}
}
