package corral

import (
	"os"
	"slices"

	"github.com/corralhq/corral/internal/pathtree"
	"github.com/corralhq/corral/mounts"
)

// checkBindChangeset checks a bind whose writes a changeset keeps
// (Bind.Changeset); s.Overlaid and the binds before b are resolved.
func (s *spec) checkBindChangeset(c Config, b Bind) error {
	if !b.Changeset {
		return nil
	}
	refuse := func(reason string) error {
		return &ConfigError{Field: "Binds", Value: b.Source, Reason: reason}
	}
	switch {
	case c.Changeset == "":
		return refuse("keeps its writes in a changeset (Changeset is set on the bind) but the Config has no Changeset")
	case b.ReadOnly:
		return refuse("is read-only: a changeset has nothing to keep from it")
	}
	if fi, err := os.Stat(b.Source); err != nil || !fi.IsDir() {
		return refuse("not a directory: overlayfs mounts directories only")
	}
	others := append([]string{s.Workspace}, s.Overlaid...)
	for _, o := range s.Binds {
		if o.Changeset {
			others = append(others, o.Source)
		}
	}
	for _, o := range others {
		if pathtree.Within(b.Source, o) || pathtree.Within(o, b.Source) {
			return refuse("overlaps " + o + ", also in the changeset: the changeset's directories must not overlap")
		}
	}
	return nil
}

// changesetRoots are the directories a changeset overlays: the workspace,
// the ChangesetPaths, then the sources of the binds it keeps.
func (s *spec) changesetRoots() []string {
	roots := append([]string{s.Workspace}, s.Overlaid...)
	for _, b := range s.Binds {
		if b.Changeset {
			roots = append(roots, b.Source)
		}
	}
	return roots
}

// writableSources are the host directories writable binds show.
func (s *spec) writableSources() []string {
	var out []string
	for _, b := range s.Binds {
		if !b.ReadOnly {
			out = append(out, b.Source)
		}
	}
	return out
}

// atDests moves each overlay whose root a bind shows elsewhere to the
// bind's destination; the mount plan finds its host directory there.
func (s *spec) atDests(roots []mounts.OverlayRoot) []mounts.OverlayRoot {
	out := slices.Clone(roots)
	for i, r := range out {
		for _, b := range s.Binds {
			if b.Changeset && b.Source == r.Path {
				out[i].Path = b.Dest
			}
		}
	}
	return out
}
