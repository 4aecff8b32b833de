package corral

import "slices"

// Resolved returns c as a sandbox built from it sees it: validated, with
// defaults filled in, every path absolute and free of symlinks, duplicates
// dropped. It is what `corral profile` prints from; New resolves the same
// way. HiddenPaths holds what c hides explicitly (see DefaultHidden for the
// credential stores hidden besides); ReadOnlyPaths includes the
// PolicyFiles, which hold the canonical paths of those kept read-only.
func (c Config) Resolved() (Config, error) {
	s, err := c.resolve()
	if err != nil {
		return Config{}, err
	}
	r := c
	r.Mode, r.Network, r.Fallback = s.Mode, s.Network, s.Fallback
	r.Workspace = s.Workspace
	r.WritablePaths, r.ReadOnlyPaths = s.Writable, s.ReadOnly
	r.HiddenPaths = slices.DeleteFunc(slices.Clone(s.Hidden), func(h string) bool { return slices.Contains(s.DefaultHidden, h) })
	r.PolicyFiles = s.Policy
	r.Env, r.AllowPlanting, r.Protect = s.Env, s.AllowPlanting, s.Protect
	r.ChangesetPaths = s.Overlaid
	r.WorkspaceDest, r.Binds = s.WorkspaceDest, s.Binds
	if s.Egress != nil {
		r.ProxyConnections = max(s.Egress.maxConns, NoLimit)
	}
	if r.Changeset != "" {
		if r.Changeset, err = s.changesetPath(r.Changeset); err != nil {
			return Config{}, err
		}
	}
	return r, nil
}

// protectedNames are the entries of ProtectedNames that allow does not
// exempt, then the names of extra: those guarded inside writable roots.
func protectedNames(allow, extra []string) []string {
	var out []string
	for _, n := range ProtectedNames() {
		if !slices.Contains(allow, n) {
			out = append(out, n)
		}
	}
	for _, n := range extra {
		if !slices.Contains(out, n) && !slices.Contains(allow, n) {
			out = append(out, n)
		}
	}
	return out
}

// protected are the names s guards inside writable roots.
func (s *spec) protected() []string { return protectedNames(s.AllowPlanting, s.Protect) }

// Protected returns the names c guards inside writable roots: the entries
// of ProtectedNames but those in AllowPlanting, then those of Protect.
func (c Config) Protected() []string { return protectedNames(c.AllowPlanting, c.Protect) }
