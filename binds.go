package corral

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corralhq/corral/internal/pathtree"
)

// Bind shows a host file or directory at another path inside the sandbox,
// as bubblewrap's --bind SRC DEST does: an agent's own workspace at
// /agent, say. The host's tree is not written to make the destination:
// the directory that holds it is rebuilt on a read-only tmpfs in the
// sandbox (see package mounts). Destinations need a mount namespace, so
// only the full rung has them: on the landlock and seatbelt rungs, and
// unsandboxed, New fails naming the destination.
type Bind struct {
	// Source is the host path; it must exist. Symlinks in it are
	// resolved once, by New. It may lie in a HiddenPaths entry (the bind
	// then shows it at Dest alone), never in a credential store hidden by
	// default that Reveal does not name.
	Source string
	// Dest is where Source appears inside the sandbox: absolute and clean,
	// not /, nor under /proc, /dev or /sys, and neither inside nor holding
	// any other path of the Config as the sandbox sees it. The directory
	// above it must exist on the host (a missing one fails the sandbox's
	// setup, naming it); Dest itself need not.
	Dest string
	// ReadOnly binds Source read-only; otherwise it is writable like a
	// WritablePaths entry (and under the same rules: protected names stay
	// read-only inside it, a home directory needs AllowHome).
	ReadOnly bool
	// Changeset keeps the writes to a writable Source in Config.Changeset,
	// overlaid at Dest as the workspace is, instead of writing the host's
	// files: Source is then one of the changeset's directories. Source
	// must be a directory that neither lies in nor holds the workspace or
	// another of the changeset's directories.
	Changeset bool
}

// resolveBinds validates c.Binds and c.WorkspaceDest after the other paths
// are resolved.
func (s *spec) resolveBinds(c Config) error {
	s.RealPaths = c.RealPathsFallback
	if len(c.Binds) == 0 && c.WorkspaceDest == "" {
		return nil
	}
	if c.WorkspaceDest != "" {
		if err := checkDest("WorkspaceDest", c.WorkspaceDest); err != nil {
			return err
		}
		if c.Changeset != "" {
			return &ConfigError{Field: "WorkspaceDest", Value: c.WorkspaceDest, Reason: "a changeset overlays the workspace at its own path; drop one of the two"}
		}
		s.WorkspaceDest = c.WorkspaceDest
	}
	for _, b := range c.Binds {
		if err := checkDest("Binds", b.Dest); err != nil {
			return err
		}
		src, err := canonical("Binds", b.Source)
		if err != nil {
			return err
		}
		b.Source = src
		if err := s.checkBindChangeset(c, b); err != nil {
			return err
		}
		s.Binds = append(s.Binds, b)
	}
	return nil
}

// checkDest checks the form of a destination.
func checkDest(field, d string) error {
	switch {
	case d == "" || strings.ContainsRune(d, 0):
		return &ConfigError{Field: field, Value: d, Reason: "want an absolute path inside the sandbox"}
	case !filepath.IsAbs(d) || filepath.Clean(d) != d:
		return &ConfigError{Field: field, Value: d, Reason: "want an absolute, clean path inside the sandbox"}
	case d == "/" || d == "/tmp":
		return &ConfigError{Field: field, Value: d, Reason: "cannot be a destination: the sandbox makes it itself"}
	}
	for _, fs := range pseudoFS {
		if pathtree.Within(d, fs) {
			return &ConfigError{Field: field, Value: d, Reason: "lies in " + fs + ", which the sandbox makes itself"}
		}
	}
	return nil
}

// checkDestOverlap refuses a destination inside or around any other path
// the sandbox shows: its mount point is made by rebuilding the directory
// above it, which must hold nothing else that is configured there.
func (s *spec) checkDestOverlap() error {
	dests := s.dests()
	// A persistent home is an overlay the destination's directory would be
	// rebuilt over.
	others := slices.Concat([]string{s.Workspace, s.Home}, s.Writable, s.ReadOnly, s.Hidden, s.Policy)
	for i, d := range dests {
		for _, o := range others {
			if o != "" && (pathtree.Within(d.path, o) || pathtree.Within(o, d.path)) {
				return &ConfigError{Field: d.field, Value: d.path, Reason: fmt.Sprintf("overlaps %s, which is also configured", o)}
			}
		}
		for _, e := range dests[i+1:] {
			if pathtree.Within(d.path, e.path) || pathtree.Within(e.path, d.path) {
				return &ConfigError{Field: d.field, Value: d.path, Reason: "overlaps the destination " + e.path}
			}
		}
	}
	return nil
}

// dests lists every destination, the workspace's first.
func (s *spec) dests() []role {
	var out []role
	if s.WorkspaceDest != "" {
		out = append(out, role{"WorkspaceDest", s.WorkspaceDest})
	}
	for _, b := range s.Binds {
		out = append(out, role{"Binds", b.Dest})
	}
	return out
}

// hasDests reports whether anything is shown at a destination.
func (s *spec) hasDests() bool { return s.WorkspaceDest != "" || len(s.Binds) > 0 }

// privateTmp is where a command without a workspace starts: its own
// /tmp, which the mount namespace makes private.
const privateTmp = "/tmp"

// sandboxWorkspace is where the command sees the workspace: with
// NoWorkspace, the private /tmp it starts in.
func (s *spec) sandboxWorkspace() string {
	if s.NoWorkspace {
		return privateTmp
	}
	if s.WorkspaceDest != "" {
		return s.WorkspaceDest
	}
	return s.Workspace
}

// destsOn fits the destinations to rung, which has no mount namespace:
// it refuses them, or with RealPaths shows each source at its host path.
func (s *spec) destsOn(rung Rung) error {
	if !s.hasDests() {
		return nil
	}
	if !s.RealPaths {
		return s.destRefusal(rung)
	}
	return s.atRealPaths(rung)
}

// destRefusal is the error of a sandbox with destinations on a rung that
// cannot make them.
func (s *spec) destRefusal(rung Rung) error {
	d := s.dests()[0]
	return &SetupError{Layer: LayerMountNS, Path: d.path, Err: fmt.Errorf(
		"a mount destination (%s) needs a mount namespace, which rung %s does not have "+
			"(RealPathsFallback, real_paths_fallback in a config file, shows it at its host path instead)", d.field, rung)}
}

// atRealPaths drops the destinations for the sources' own paths: the
// workspace at its path, each bind's source as a writable or read-only
// path. A source in a hidden path cannot be shown there.
func (s *spec) atRealPaths(rung Rung) error {
	var moved []string
	for _, b := range s.pathMap() {
		for _, h := range s.Hidden {
			if pathtree.Within(b.Source, h) {
				return &SetupError{Layer: LayerMountNS, Path: b.Dest, Err: fmt.Errorf(
					"rung %s has no mount namespace, and %s cannot be shown at its host path %s instead: it lies in the hidden path %s",
					rung, b.Dest, b.Source, h)}
			}
		}
		moved = append(moved, b.Dest+" is "+b.Source)
	}
	for _, b := range s.Binds {
		switch {
		case b.ReadOnly && !slices.Contains(s.ReadOnly, b.Source):
			s.ReadOnly = append(s.ReadOnly, b.Source)
		case !b.ReadOnly && !slices.Contains(s.Writable, b.Source):
			s.Writable = append(s.Writable, b.Source)
		}
	}
	s.WorkspaceDest, s.Binds = "", nil
	if s.logf != nil {
		s.logf("corral: rung %s has no mount namespace: paths are shown at their host paths (RealPathsFallback): %s",
			rung, strings.Join(moved, ", "))
	}
	return nil
}

// sources maps each destination to its host source, for the mount plan.
func (s *spec) sources() map[string]string {
	if !s.hasDests() {
		return nil
	}
	out := map[string]string{}
	if s.WorkspaceDest != "" {
		out[s.WorkspaceDest] = s.Workspace
	}
	for _, b := range s.Binds {
		out[b.Dest] = b.Source
	}
	return out
}

// pathMap is the sandbox's destinations, to translate paths both ways.
func (s *spec) pathMap() []Bind {
	var out []Bind
	if s.WorkspaceDest != "" {
		out = append(out, Bind{Source: s.Workspace, Dest: s.WorkspaceDest})
	}
	return append(out, s.Binds...)
}

// SandboxPath returns where the host path p appears inside the sandbox: p
// itself unless it lies in the source of a destination (the workspace's
// WorkspaceDest, or a Bind). p must be absolute and clean, symlinks
// resolved.
func (sb *Sandbox) SandboxPath(p string) string {
	for _, b := range sb.spec.pathMap() {
		if rel, ok := pathtree.Rel(b.Source, p); ok {
			return filepath.Join(b.Dest, rel)
		}
	}
	return p
}

// HostPath returns the host path that the sandbox shows at p, an absolute
// clean path inside the sandbox: p itself unless it lies in a destination.
func (sb *Sandbox) HostPath(p string) string {
	for _, b := range sb.spec.pathMap() {
		if rel, ok := pathtree.Rel(b.Dest, p); ok {
			return filepath.Join(b.Source, rel)
		}
	}
	return p
}

// Binds returns the sandbox's binds, their sources canonical: with
// WorkspaceDir, every place whose path inside the sandbox is not the
// host's (see SandboxPath and HostPath).
func (sb *Sandbox) Binds() []Bind { return slices.Clone(sb.spec.Binds) }

// WorkspaceDir returns where commands see the workspace: WorkspaceDest
// when set, else the canonical workspace path.
func (sb *Sandbox) WorkspaceDir() string { return sb.spec.sandboxWorkspace() }

// noWorkspaceRefusal is New's refusal of NoWorkspace on a rung without a
// mount namespace, where the private /tmp a command would start in is a
// directory of the host.
func noWorkspaceRefusal(rung Rung) error {
	return &SetupError{Layer: LayerMountNS, Err: fmt.Errorf(
		"a sandbox without a workspace starts commands in a private /tmp, which needs a mount namespace; rung %s has none", rung)}
}
