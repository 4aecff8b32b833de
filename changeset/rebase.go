package changeset

import (
	"io/fs"
	"os"
)

// Rebase begins the changeset again over the originals as they are now: for
// every root whose upper directory holds nothing (its changes were applied
// or discarded, or none were made), the baseline is recorded afresh. A
// changeset shared over time with other writers of the same directories
// (another sandbox's changeset applied there, say) otherwise keeps the
// fingerprints of when it began, and its next change to a file the other
// writer changed meanwhile is a conflict although the command saw the new
// file. Roots holding changes keep their baseline: it is what those changes
// were made against.
//
// Call it when no command runs on the changeset, before the next one
// starts: it takes the changeset's lock, and fails with ErrInUse while a
// sandbox holds it. It costs one walk of each rebased root (see
// "Conflicts" in the package documentation).
func (c *Changeset) Rebase() error {
	unlock, err := c.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	for _, r := range c.roots {
		if err := r.rebase(); err != nil {
			return &fs.PathError{Op: "rebase changeset", Path: r.Path, Err: err}
		}
	}
	return nil
}

func (r Root) rebase() error {
	entries, err := os.ReadDir(r.Upper)
	if err != nil || len(entries) > 0 {
		return err
	}
	base, err := recordBaseline(r.Path)
	if err != nil {
		return err
	}
	return r.saveBaseline(base)
}
