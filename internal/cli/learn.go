package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
)

// learnFlags are learn's own flags besides the run flags.
type learnFlags struct {
	out       string // --out: where the config goes ("" stdout)
	mergeInto string // --merge-into: the config file written back
}

func newLearnCmd() *cobra.Command {
	var f runFlags
	var lf learnFlags
	cmd := &cobra.Command{
		Use:   "learn [run flags] [--out FILE | --merge-into FILE] -- CMD [ARG...]",
		Short: "Run a command once and print the agent config that lets it run",
		Long: `Run CMD once so that nothing it does reaches the host, and print the smallest
agent config (the TOML --config reads) that lets it run with no refusal.

The workspace and the --writable directories are overlaid with a throwaway
changeset and your home with a throwaway layer: what CMD writes in the home is
learned as writable paths, one directory per program (~/.npm, ~/.cache/pip).
Every refusal is recorded, reads of hidden paths too. With --net allow every
destination is reached through corral's proxy and learned (allowed_domains,
with the port when it is not 80 or 443, and allowed_ips, with a warning, where
a name resolved into a range the proxy refuses); without it, each is refused
and learned without being reached. Each entry says why (the first path or
call that needed it, and the count); one that would lift a protection (the
home writable, a protected name, a credential store) is printed commented
out, with the reason.

With --config FILE the config printed is FILE with the learned entries added
to the agent (each marked "# learned"); --merge-into FILE writes that back to
FILE, the rest of it untouched. Exit status: the command's own, as for run.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			if lf.mergeInto != "" && lf.out != "" {
				return usageError("--out and --merge-into: choose one")
			}
			for _, name := range []string{"review", "scope", "report", "no-report", "changeset", "changeset-writable"} {
				if f.given(name) {
					return usageError("--%s: learn throws its run away and records every refusal itself", name)
				}
			}
			if lf.mergeInto != "" && f.configFile == "" {
				f.configFile = lf.mergeInto
			}
			cfg, err := f.config()
			var ee *exitError
			switch {
			case errors.As(err, &ee):
				return err
			case err != nil:
				return &exitError{code: exitSetup, msg: err.Error()}
			}
			return learnCommand(cfg, &f, lf, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	f.register(cmd)
	cmd.Flags().StringVar(&lf.out, "out", "", "write the learned config to `FILE` instead of standard output")
	cmd.Flags().StringVar(&lf.mergeInto, "merge-into", "", "add the learned entries to the agent in the config `FILE` and write it back (implies --config FILE)")
	return cmd
}

// learnCommand runs args in learning mode and writes what it learned.
func learnCommand(cfg corral.Config, f *runFlags, lf learnFlags, args []string) error {
	var doc []byte
	if f.configFile != "" {
		var err error
		if doc, err = os.ReadFile(f.configFile); err != nil {
			return configUsageError("--config %s: %v", f.configFile, err)
		}
	}
	closeInherited()
	ctx := context.Background()
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	l, err := corral.LearnCommand(ctx, withInitHelper(cfg), args[0], args[1:]...)
	if err != nil {
		return f.configFailure(err)
	}
	l.Dir = f.cwd
	l.Stdin, l.Stdout, l.Stderr = os.Stdin, os.Stderr, os.Stderr
	if lf.out != "" || lf.mergeInto != "" {
		l.Stdout = os.Stdout // the config goes elsewhere
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(signals)
	if err := l.Start(); err != nil {
		l.Learned()
		return startError(err, f.cwd)
	}
	go func() {
		for sig := range signals {
			l.Process.Signal(sig)
		}
	}()
	runErr := l.Wait()
	learned, err := l.Learned()
	if err != nil {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	text, err := learnedText(learned, doc, f, args)
	if err != nil {
		return err
	}
	if err := writeLearned(text, lf); err != nil {
		return err
	}
	for _, e := range learned.Entries {
		if e.Warning != "" {
			say("corral: learned %s %s: %s", e.Key, e.Value, e.Warning)
		}
	}
	for _, n := range learned.Notes {
		say("corral: %s", n)
	}
	return exitStatus(l.Cmd, runErr)
}

// learnedText is the config to write: doc with the learned entries merged
// into the agent, or a new file.
func learnedText(learned *corral.Learned, doc []byte, f *runFlags, args []string) ([]byte, error) {
	if doc == nil {
		return learned.TOML("learned", "learned by: corral learn -- "+strings.Join(args, " ")), nil
	}
	id := f.agent
	if id == "" {
		_, a, err := loadConfig(f.configFile, "")
		if err != nil {
			return nil, err
		}
		id = a.ID
	}
	merged, err := learned.MergeInto(doc, id)
	if err == nil {
		err = toml.Unmarshal(merged, &map[string]any{})
	}
	if err != nil {
		return nil, configUsageError("cannot add the learned entries to %s (%v); without --config, learn prints them as a file of their own", f.configFile, err)
	}
	return merged, nil
}

// writeLearned writes text where lf says: --merge-into's file (replaced
// whole, its mode kept), --out's, or standard output.
func writeLearned(text []byte, lf learnFlags) error {
	name := lf.out
	if lf.mergeInto != "" {
		name = lf.mergeInto
	}
	if name == "" {
		_, err := os.Stdout.Write(text)
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(name); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".corral-learn-*")
	if err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("%s: %v", name, err)}
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(text); err != nil {
		tmp.Close()
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	tmp.Chmod(mode)
	if err := tmp.Close(); err != nil {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	return nil
}
