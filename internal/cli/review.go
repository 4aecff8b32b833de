package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/corralhq/corral/changeset"
)

// notStartedError marks a run whose command never started, so that --review
// has nothing new to ask about and leaves the changeset alone.
type notStartedError struct{ error }

func (e notStartedError) Unwrap() error { return e.error }

func notStarted(err error) error { return notStartedError{err} }

// reviewAfterRun asks on the terminal what to do with the changeset once the
// command has run, whatever its status, which stays the exit status.
func reviewAfterRun(dir string, runErr error) error {
	var ns notStartedError
	if errors.As(runErr, &ns) {
		return runErr
	}
	if err := review(os.Stdin, os.Stderr, dir); err != nil {
		if runErr == nil {
			return &exitError{code: 1, msg: "review: " + changeset.VisibleLine(err.Error())}
		}
		fmt.Fprintln(os.Stderr, "corral: review: "+changeset.VisibleLine(err.Error()))
	}
	return runErr
}

const reviewPrompt = "[r] review diff, [a] apply, [s] save as tar, [d] discard (default): "

// review shows the changeset's changes on out and asks, reading answers from
// in, until they are applied, saved or discarded. The end of input is the
// default answer, discard.
func review(in io.Reader, out io.Writer, dir string) error {
	cs, err := changeset.Open(dir)
	if err != nil {
		return err
	}
	changes, err := cs.List()
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		fmt.Fprintf(out, "corral: no changes to %s\n", rootsText(cs))
		return cs.Discard()
	}
	fmt.Fprintf(out, "corral: %d change(s) to %s:\n", len(changes), rootsText(cs))
	printChanges(out, cs.RootPaths(), changes, "  ")
	r := bufio.NewReader(in)
	for {
		fmt.Fprint(out, reviewPrompt)
		done, err := reviewStep(r, out, cs, readAnswer(r))
		if done || err != nil {
			return err
		}
	}
}

// reviewStep carries out one answer and reports whether the review is over.
func reviewStep(r *bufio.Reader, out io.Writer, cs *changeset.Changeset, answer string) (bool, error) {
	switch answer {
	case "r", "review":
		return false, cs.Diff(out)
	case "a", "apply":
		return reviewApply(out, cs)
	case "s", "save":
		return reviewSave(r, out, cs)
	case "", "d", "discard":
		if err := cs.Discard(); err != nil {
			return true, err
		}
		fmt.Fprintf(out, "corral: changes discarded\n")
		return true, nil
	}
	fmt.Fprintf(out, "corral: answer r, a, s or d\n")
	return false, nil
}

func reviewApply(out io.Writer, cs *changeset.Changeset) (bool, error) {
	res, err := cs.Apply(changeset.ApplyOptions{})
	var ce *changeset.ConflictError
	if errors.As(err, &ce) {
		printConflicts(out, cs, ce)
		return false, nil // still pending: save or discard instead
	}
	if err != nil {
		return true, err
	}
	printApplied(out, cs, res)
	printGuarded(out, res)
	return true, cs.Discard()
}

// reviewSave exports the changes to a file and keeps the changeset, which
// 'corral changes' can still apply or discard.
func reviewSave(r *bufio.Reader, out io.Writer, cs *changeset.Changeset) (bool, error) {
	def := filepath.Base(cs.Dir()) + ".tar"
	fmt.Fprintf(out, "save to [%s]: ", def)
	name := readLine(r)
	if name == "" {
		name = def
	}
	if err := exportTo(cs, name, false); err != nil {
		fmt.Fprintf(out, "corral: %s\n", changeset.VisibleLine(err.Error()))
		return false, nil
	}
	fmt.Fprintf(out, "corral: changes saved to %s; the changeset stays in %s\n", name, cs.Dir())
	return true, nil
}

// readAnswer reads one line, trimmed and lower-cased; "" at the end of input.
func readAnswer(r *bufio.Reader) string { return strings.ToLower(readLine(r)) }

func readLine(r *bufio.Reader) string {
	line, _ := r.ReadString('\n')
	return strings.TrimSpace(line)
}
