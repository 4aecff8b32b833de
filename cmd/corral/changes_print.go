package main

import (
	"fmt"
	"io"

	"github.com/corralhq/corral/changeset"
)

// printChanges writes one line per change: status letter, path, sizes.
func printChanges(w io.Writer, changes []changeset.Change, indent string) {
	for _, ch := range changes {
		fmt.Fprintf(w, "%s%s%s\n", indent, ch, sizeNote(ch))
	}
}

func sizeNote(ch changeset.Change) string {
	if ch.Status == changeset.Deleted {
		return oldNote(ch)
	}
	switch ch.Type {
	case changeset.Dir:
		return ""
	case changeset.Symlink:
		return " (→ " + ch.Target + ")"
	case changeset.File:
	default:
		return " (" + string(ch.Type) + ")"
	}
	switch {
	case ch.OldType != changeset.File:
		return fmt.Sprintf(" (%s)", bytesText(ch.Size))
	case ch.Mode != ch.OldMode:
		return fmt.Sprintf(" (%s, was %s, mode %s → %s)", bytesText(ch.Size), bytesText(ch.OldSize), ch.OldMode, ch.Mode)
	}
	return fmt.Sprintf(" (%s, was %s)", bytesText(ch.Size), bytesText(ch.OldSize))
}

func oldNote(ch changeset.Change) string {
	switch ch.OldType {
	case changeset.Dir:
		return ""
	case changeset.File:
		return fmt.Sprintf(" (was %s)", bytesText(ch.OldSize))
	}
	return " (" + string(ch.OldType) + ")"
}

func bytesText(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

func printConflicts(w io.Writer, ce *changeset.ConflictError) {
	fmt.Fprintf(w, "corral: nothing applied: %d original(s) changed on the host since the changeset began:\n", len(ce.Conflicts))
	for _, c := range ce.Conflicts {
		fmt.Fprintf(w, "  %s (%s)\n", c.Path, c.Reason)
	}
}

func printApplied(w io.Writer, cs *changeset.Changeset, res *changeset.Result) {
	fmt.Fprintf(w, "applied %d change(s) to %s\n", len(res.Applied), cs.Lower())
	printChanges(w, res.Applied, "  ")
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "skipped %d special file(s) (sockets, fifos, devices):\n", len(res.Skipped))
		printChanges(w, res.Skipped, "  ")
	}
}
