package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/agent"
)

// lastReportName is the file in the state directory that holds the last
// `corral run`'s refusals, as --report writes them.
const lastReportName = "last-report.jsonl"

func lastReportPath() (string, error) {
	dir, err := agent.DefaultStateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, lastReportName), nil
}

// keepLastReport stores vs as the last run's report, for `corral why`. It
// says nothing when it cannot: the run's outcome does not depend on it.
func keepLastReport(vs []corral.Violation) {
	name, err := lastReportPath()
	if err != nil || os.MkdirAll(filepath.Dir(name), 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".last-report-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	if writeJSONLines(tmp, vs) != nil || tmp.Close() != nil {
		tmp.Close()
		return
	}
	os.Rename(tmp.Name(), name)
}

func newWhyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "why [REPORT]",
		Short: "Explain the last run's refusals, and what would allow each",
		Long: `Explain in words what the sandbox refused the last 'corral run' (kept in
$XDG_STATE_HOME/corral/` + lastReportName + `), or the report REPORT that --report
wrote: each refusal with the flag or config key that would allow it and what
allowing it costs. 'corral learn' writes the config that allows them all.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			} else {
				var err error
				if name, err = lastReportPath(); err != nil {
					return &exitError{code: exitUsage, msg: err.Error()}
				}
			}
			vs, err := readReport(name)
			if err != nil {
				if len(args) == 0 && os.IsNotExist(err) {
					return &exitError{code: exitUsage, msg: "no run's report kept yet: run 'corral run' first, or name a --report file"}
				}
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			explain(cmd.OutOrStdout(), vs)
			return nil
		},
	}
}

// readReport reads a report of JSON lines.
func readReport(name string) ([]corral.Violation, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var vs []corral.Violation
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var v corral.Violation
		if err := json.Unmarshal([]byte(line), &v); err != nil || v.Kind == "" {
			return nil, fmt.Errorf("%s:%d: not a line of a corral report", name, n)
		}
		vs = append(vs, v)
	}
	return vs, sc.Err()
}

// explain writes one paragraph per refusal.
func explain(w io.Writer, vs []corral.Violation) {
	n := 0
	for _, v := range vs {
		if v.Probe {
			continue
		}
		n++
		fmt.Fprintf(w, "%s\n  allow: %s\n  cost:  %s\n", refusalWords(v), allowWords(v), costWords(v))
	}
	if n == 0 {
		fmt.Fprintln(w, "nothing was refused")
	}
}

func refusalWords(v corral.Violation) string {
	times := ""
	if v.Count > 1 {
		times = fmt.Sprintf(" (%d times)", v.Count)
	}
	by := ""
	if v.Process != "" {
		by = v.Process + " "
	}
	verbs := map[corral.ViolationKind]string{
		corral.ViolationWrite: "could not write", corral.ViolationRead: "could not read",
		corral.ViolationPlant: "wrote, kept from the host,", corral.ViolationNetwork: "could not reach",
		corral.ViolationSyscall: "was refused the call", corral.ViolationLimit: "hit the limit",
	}
	verb, ok := verbs[v.Kind]
	if !ok {
		verb = "was refused"
	}
	if by == "" {
		by = "the command "
	}
	target := v.Target
	if target == "" {
		target = "more"
	}
	return fmt.Sprintf("%s%s %s%s: %s", by, verb, target, times, v.Rule)
}

func allowWords(v corral.Violation) string {
	if a := v.Allows(); a != "" {
		return a
	}
	if v.Kind == corral.ViolationLimit {
		return "a higher --" + v.Target + " (limits." + strings.ReplaceAll(v.Target, "-", "_") + ")"
	}
	return "no setting: the sandbox refuses it always"
}

// costWords says what allowing v gives up.
func costWords(v corral.Violation) string {
	a := v.Allows()
	switch {
	case strings.HasPrefix(a, "--writable"):
		return "the command can change what is there, for every later program that reads it"
	case strings.HasPrefix(a, "--reveal"):
		return "the command can read the credentials there, and send them wherever it can reach"
	case strings.HasPrefix(a, "allow_planting"):
		return "programs on the host run what the command writes there (git hooks, editor tasks, shell start-up)"
	case strings.HasPrefix(a, "leaving out"):
		return "the protection you configured for that path is gone"
	case strings.HasPrefix(a, "--allow-domain"):
		return "the command can send data to that name, and fetch code from it"
	case strings.HasPrefix(a, "--allow-ip"):
		return "allowed names may lead into that range: services on your network or loopback that expect only local clients"
	case strings.HasPrefix(a, "--allow-unix-sockets"):
		return "the command can connect to unix sockets it can see under writable paths, and make its own"
	case strings.HasPrefix(a, "allow_ptrace"):
		return "the command can trace its own processes and read their memory"
	case strings.HasPrefix(a, "--net host"):
		return "the command reaches the whole network as you do, with nothing recorded"
	case v.Kind == corral.ViolationLimit:
		return "a runaway command takes more of the machine before it is stopped"
	}
	return "nothing to weigh: no setting allows it"
}
