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
	byRoot(w, roots, indent, protectedFirst(changes), func(ch changeset.Change) string { return ch.Root },
		func(ch changeset.Change) string { return mark(ch) + ch.String() + sizeNote(ch) + flags(ch) })
}

// protectedFirst puts the changes to protected entries (names that make a
// program on the host run code: git's hooks, an editor's tasks) before the
// others, each group in its order: they are what a reviewer reads first.
func protectedFirst(changes []changeset.Change) []changeset.Change {
	out := make([]changeset.Change, 0, len(changes))
	for _, first := range []bool{true, false} {
		for _, ch := range changes {
			if _, ok := changeset.Protected(ch.Path); ok == first {
				out = append(out, ch)
			}
		}
	}
	return out
}

// mark is "! " before a change to a protected entry.
func mark(ch changeset.Change) string {
	if _, ok := changeset.Protected(ch.Path); ok {
		return "! "
	}
	return ""
}

// printProtectedChanges writes a line per change to a protected entry, saying
// which program runs code from it and that apply does not land it as is.
func printProtectedChanges(w io.Writer, roots []string, changes []changeset.Change) {
	var prot []changeset.Change
	for _, ch := range changes {
		if _, ok := changeset.Protected(ch.Path); ok {
			prot = append(prot, ch)
		}
	}
	if len(prot) == 0 {
		return
	}
	fmt.Fprintf(w, "corral: %d change(s) to protected entries, held or merged through git's allowlist on apply:\n", len(prot))
	byRoot(w, roots, "  ", prot, func(ch changeset.Change) string { return ch.Root },
		func(ch changeset.Change) string { return "! " + ch.String() })
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
	if pr, ok := changeset.Protected(ch.Path); ok {
		f = append(f, "protected: "+pr.What)
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
	if len(res.Guarded) > 0 {
		fmt.Fprintf(w, "guarded %d change(s) to protected entries, held or merged through git's allowlist:\n", len(res.Guarded))
		printChanges(w, cs.RootPaths(), res.Guarded, "  ")
	}
}

// printGuarded writes what apply did with the changes to protected
// entries, one line each, as `corral run` reports what its guard dropped.
func printGuarded(w io.Writer, res *changeset.Result) {
	for _, l := range res.Held {
		fmt.Fprintf(w, "corral: held %s\n", changeset.VisibleLine(l))
	}
	for _, l := range res.Dropped {
		fmt.Fprintf(w, "corral: dropped %s\n", changeset.VisibleLine(l))
	}
}
