package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral/changeset"
)

func newChangesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "changes",
		Short: "List, diff, apply, discard or export a changeset",
		Long: `A changeset holds what commands run with 'corral run --changeset DIR'
wrote to the workspace, and to the --changeset-writable paths; those
directories are untouched until the changes are applied. With several
directories, changes are listed under each, and diffs and archives name
files by absolute path.

Exit status: 0 on success; 1 when the changeset cannot be read or a change
cannot be applied; 2 usage error.`,
		// Without these cobra prints the help for a misspelt subcommand and
		// exits 0, as if it had run.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newChangesListCmd(), newChangesDiffCmd(), newChangesApplyCmd(),
		newChangesDiscardCmd(), newChangesExportCmd(), newChangesImportCmd())
	return cmd
}

func newChangesListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list DIR",
		Short: "List added, modified, deleted and replaced paths with their sizes",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, changes, err := openAndList(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), changes)
			}
			if len(changes) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "no changes to %s\n", rootsText(cs))
			}
			printChanges(cmd.OutOrStdout(), cs.RootPaths(), changes, "")
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of changes")
	return cmd
}

func newChangesDiffCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "diff DIR",
		Short: "Print a unified diff of the changes against the originals",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, changes, err := openAndList(args[0])
			if err != nil {
				return err
			}
			printProtectedChanges(cmd.ErrOrStderr(), cs.RootPaths(), changes)
			return failure(cs.Diff(cmd.OutOrStdout()))
		},
	}
}

func newChangesApplyCmd() *cobra.Command {
	var force bool
	var protect []string
	cmd := &cobra.Command{
		Use:   "apply DIR",
		Short: "Apply the changes to the real directories",
		Long: `Apply the changes to the real directories, file by file, each replaced
atomically. Nothing is applied, in any directory, when an original changed on
the host since the changeset began, unless --force. Changes to protected
entries (git's hooks and config, editors' tasks, .envrc: see 'corral
profile') do not land as they are: a git directory's go through the same
allowlist as a command's, any other is held under .corral-held/ in its
directory; each is reported on standard error. The changeset stays, empty,
for further runs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := openChangeset(args[0])
			if err != nil {
				return err
			}
			res, err := cs.Apply(changeset.ApplyOptions{Force: force, Protect: protect})
			var ce *changeset.ConflictError
			if errors.As(err, &ce) {
				printConflicts(cmd.ErrOrStderr(), cs, ce)
				return &exitError{code: 1}
			}
			if res != nil {
				printApplied(cmd.OutOrStdout(), cs, res)
				printGuarded(cmd.ErrOrStderr(), res)
			}
			return failure(err)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "apply even over originals changed since the changeset began")
	cmd.Flags().StringArrayVar(&protect, "protect", nil, "guard `NAME` too, as 'corral run --protect' does (repeatable)")
	return cmd
}

func newChangesDiscardCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "discard DIR",
		Short: "Delete the changeset and its changes",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := openChangeset(args[0])
			if err != nil {
				return err
			}
			return failure(cs.Discard())
		},
	}
}

func newChangesExportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export DIR -o FILE.tar",
		Short: "Write the changes as a tar archive, deletions as .wh. files",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := openChangeset(args[0])
			if err != nil {
				return err
			}
			if out == "-" {
				return failure(cs.Export(cmd.OutOrStdout()))
			}
			return failure(exportTo(cs, out, true))
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the archive to `FILE` (- for standard output)")
	cmd.MarkFlagRequired("output")
	return cmd
}

func newChangesImportCmd() *cobra.Command {
	var in, workspace string
	var roots []string
	cmd := &cobra.Command{
		Use:   "import DIR -i FILE.tar [--workspace DIR] [--root FROM=TO]...",
		Short: "Make a changeset from an exported archive, to review and apply here",
		Long: `Make a changeset in DIR from an archive written by 'corral changes export',
to list, diff and apply here. The archive's workspace stands for --workspace.
Each of its other directories (from --changeset-writable) needs a --root
FROM=TO naming the directory it stands for here (TO may equal FROM): the
archive's own list is not trusted, and an archive with a directory not
mapped is refused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := importOptions(roots)
			if err != nil {
				return err
			}
			r, err := openInput(cmd, in)
			if err != nil {
				return err
			}
			defer r.Close()
			if workspace == "" {
				if workspace, err = os.Getwd(); err != nil {
					return failure(err)
				}
			}
			_, err = changeset.Import(args[0], workspace, r, opts)
			var ue *changeset.UnmappedRootError
			if errors.As(err, &ue) {
				q := changeset.Quote(ue.Root)
				return &exitError{code: 1, msg: fmt.Sprintf("the archive also records changes to %s: nothing imported; to accept them give --root %s=DIR", q, q)}
			}
			return failure(err)
		},
	}
	cmd.Flags().StringVarP(&in, "input", "i", "", "read the archive from `FILE` (- for standard input)")
	cmd.Flags().StringVar(&workspace, "workspace", "", "the directory the workspace's changes are for (default: the current directory)")
	cmd.Flags().StringArrayVar(&roots, "root", nil,
		"map the archive's directory FROM (its path where exported) to TO here, given as `FROM=TO` (repeatable)")
	cmd.MarkFlagRequired("input")
	return cmd
}

// importOptions reads the --root mappings.
func importOptions(roots []string) (changeset.ImportOptions, error) {
	opts := changeset.ImportOptions{Roots: map[string]string{}}
	for _, m := range roots {
		from, to, ok := strings.Cut(m, "=")
		if !ok || from == "" || to == "" {
			return opts, usageError("--root %q: want FROM=TO", m)
		}
		if _, dup := opts.Roots[from]; dup {
			return opts, usageError("--root %q: %s mapped twice", m, from)
		}
		opts.Roots[from] = to
	}
	return opts, nil
}

func openChangeset(dir string) (*changeset.Changeset, error) {
	cs, err := changeset.Open(dir)
	return cs, failure(err)
}

func openAndList(dir string) (*changeset.Changeset, []changeset.Change, error) {
	cs, err := openChangeset(dir)
	if err != nil {
		return nil, nil, err
	}
	changes, err := cs.List()
	return cs, changes, failure(err)
}

func openInput(cmd *cobra.Command, name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(cmd.InOrStdin()), nil
	}
	f, err := os.Open(name)
	return f, failure(err)
}

// exportTo writes the archive to a file, replacing it only when asked.
func exportTo(cs *changeset.Changeset, name string, replace bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if replace {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(name, flags, 0o644)
	if err != nil {
		return err
	}
	if err := errors.Join(cs.Export(f), f.Close()); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// failure turns an error of the changes commands into exit status 1. The
// message may hold names a sandboxed command chose: it is printed as one
// line, control characters made visible.
func failure(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: 1, msg: changeset.VisibleLine(err.Error())}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
