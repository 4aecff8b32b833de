package corral

import (
	"path/filepath"
	"slices"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/internal/pathtree"
	"github.com/corralhq/corral/mounts"
)

// MountPlan returns the mounts the Linux backend makes for c on the full
// rung, in the order it makes them, one line each (kind and path), as
// `corral profile` prints them. It resolves c as New does and is built by
// the same function as the sandbox's mount tree, but it creates nothing: a
// Changeset that does not exist yet shows where a new one would keep its
// changes. On the landlock rung there is no mount tree; on macOS the
// Seatbelt profile takes its place.
func (c Config) MountPlan() ([]string, error) {
	s, err := c.resolve()
	if err != nil {
		return nil, err
	}
	var roots []changeset.Root
	if c.Changeset != "" {
		dir, err := s.changesetPath(c.Changeset)
		if err != nil {
			return nil, err
		}
		roots = changeset.Planned(dir, s.changesetRoots()...)
		if cs, err := changeset.Open(dir); err == nil {
			roots = cs.Roots()
		}
	}
	p := mounts.Build(mountInput(s, s.atDests(overlayRoots(roots))))
	lines := make([]string, len(p.Mounts))
	for i, m := range p.Mounts {
		lines[i] = m.String()
	}
	return lines, nil
}

// mountInput is what the Linux backend's mount tree is built from: the one
// place a resolved Config becomes mount lists, for New and MountPlan alike.
// Every path is as the sandbox sees it: a path that lies in the source of a
// mount destination is listed at its own host path and again inside the
// destination, so that its rule holds at both.
func mountInput(s *spec, overlays []mounts.OverlayRoot) mounts.Input {
	var ws []string
	if !s.NoWorkspace {
		ws = []string{s.sandboxWorkspace()}
	}
	in := mounts.Input{
		Writable:  append(ws, s.inDests(s.Writable)...),
		ReadOnly:  s.inDests(s.ReadOnly),
		Hidden:    s.inDests(s.Hidden),
		Protected: s.protected(),
		Homes:     callerHomes(),
		Overlays:  overlays,
		TmpSize:   s.Limits.set.TmpSize,
		Sources:   s.sources(),
		Tmp:       s.PersistTmp,
	}
	if s.PersistHome != "" {
		in.Layered = []mounts.OverlayRoot{{Path: s.Home,
			Upper: filepath.Join(s.PersistHome, "upper"), Work: filepath.Join(s.PersistHome, "work")}}
	}
	for _, b := range s.Binds {
		if b.ReadOnly {
			in.ReadOnly = append(in.ReadOnly, b.Dest)
		} else {
			in.Writable = append(in.Writable, b.Dest)
		}
	}
	return in
}

// inDests returns paths, followed by where those that lie in the source of
// a destination appear inside it.
func (s *spec) inDests(paths []string) []string {
	out := slices.Clone(paths)
	for _, b := range s.pathMap() {
		for _, p := range paths {
			if rel, ok := pathtree.Rel(b.Source, p); ok && rel != "." {
				out = append(out, filepath.Join(b.Dest, rel))
			}
		}
	}
	return out
}

// overlayRoots are a changeset's roots as overlay mounts.
func overlayRoots(roots []changeset.Root) []mounts.OverlayRoot {
	var out []mounts.OverlayRoot
	for _, r := range roots {
		out = append(out, mounts.OverlayRoot{Path: r.Path, Upper: r.Upper, Work: r.Work})
	}
	return out
}
