package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/corralhq/corral/changeset"
)

// printChanges writes one line per change: status letter, path, sizes and
// what a reviewer must look at twice. Names and targets come from the
// sandboxed command and are quoted (changeset.Quote), so each change is
// one line whatever its name.
func printChanges(w io.Writer, roots []string, changes []changeset.Change, indent string) {
	byRoot(w, roots, indent, changes, func(ch changeset.Change) string { return ch.Root },
		func(ch changeset.Change) string { return ch.String() + sizeNote(ch) + flags(ch) })
}

// flags marks a change that makes a file executable, and a file whose
// content is binary or holds characters a terminal would act on.
func flags(ch changeset.Change) string {
	var f []string
	if ch.Executable() {
		f = append(f, "executable")
	}
	if ch.Binary {
		f = append(f, "binary")
	}
	if ch.Unprintable {
		f = append(f, "control characters")
	}
	if len(f) == 0 {
		return ""
	}
	return " [" + strings.Join(f, ", ") + "]"
}

// byRoot writes a line per item, paths relative to their root. Like ls
// given several directories, it heads each root's lines with the root when
// the changeset has several; with one, the caller's heading names it.
func byRoot[T any](w io.Writer, roots []string, indent string, items []T, rootOf func(T) string, line func(T) string) {
	if len(roots) == 1 {
		for _, it := range items {
			fmt.Fprintf(w, "%s%s\n", indent, line(it))
		}
		return
	}
	for _, r := range roots {
		head := false
		for _, it := range items {
			if rootOf(it) != r {
				continue
			}
			if !head {
				fmt.Fprintf(w, "%s%s:\n", indent, changeset.Quote(r))
				head = true
			}
			fmt.Fprintf(w, "%s  %s\n", indent, line(it))
		}
	}
}

// rootsText names the changeset's roots for a heading.
func rootsText(cs *changeset.Changeset) string {
	roots := cs.RootPaths()
	for i, r := range roots {
		roots[i] = changeset.Quote(r)
	}
	return strings.Join(roots, ", ")
}

func sizeNote(ch changeset.Change) string {
	if ch.Status == changeset.Deleted {
		return oldNote(ch)
	}
	switch ch.Type {
	case changeset.Dir:
		return ""
	case changeset.Symlink:
		return " (→ " + changeset.Quote(ch.Target) + ")"
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

func printConflicts(w io.Writer, cs *changeset.Changeset, ce *changeset.ConflictError) {
	fmt.Fprintf(w, "corral: nothing applied: %d original(s) in %s changed on the host since the changeset began:\n",
		len(ce.Conflicts), rootsText(cs))
	byRoot(w, cs.RootPaths(), "  ", ce.Conflicts, func(c changeset.Conflict) string { return c.Root },
		func(c changeset.Conflict) string { return changeset.Quote(c.Path) + " (" + c.Reason + ")" })
}

func printApplied(w io.Writer, cs *changeset.Changeset, res *changeset.Result) {
	fmt.Fprintf(w, "applied %d change(s) to %s\n", len(res.Applied), rootsText(cs))
	printChanges(w, cs.RootPaths(), res.Applied, "  ")
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "skipped %d special file(s) (sockets, fifos, devices):\n", len(res.Skipped))
		printChanges(w, cs.RootPaths(), res.Skipped, "  ")
	}
}
