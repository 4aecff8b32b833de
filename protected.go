package corral

import (
	"path"
	"path/filepath"
	"slices"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/internal/guard"
)

// Protected reports whether writing the host path p would write a
// protected entry of one of sb's writable roots (the workspace, the
// writable paths and writable binds): a name of [ProtectedNames] or of
// Config.Protect, at any depth or at the top of the root as the name is
// listed, less those Config.AllowPlanting leaves writable, or a file named
// HEAD, which makes its directory a repository; or a path the host's
// programs reach through a protected entry or git runs from a worktree (a
// protected symlink's target, core.hooksPath, a filter driver's script:
// guard.Follows), or a name listed for the top of a root relative to the
// home a root lies in (~/.config/git with --writable ~/.config). A
// command's write there is staged, held or refused by the sandbox's guard;
// an agent tool that writes files itself refuses it with the rule this
// names. entry is the protected entry's host path, what the program that
// runs code from it.
func (sb *Sandbox) Protected(p string) (entry, what string, ok bool) {
	p = filepath.Clean(p)
	for _, root := range sb.writableRoots() {
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." || !filepath.IsLocal(rel) {
			continue
		}
		rel = filepath.ToSlash(rel)
		if pr, ok := changeset.Protected(rel, sb.spec.Protect...); ok && !sb.plantingAllowed(pr.Path) {
			return filepath.Join(root, filepath.FromSlash(pr.Path)), pr.What, true
		}
		if path.Base(rel) == guard.HeadName {
			return p, "git: a HEAD file makes its directory a repository, whose config and hooks git runs", true
		}
	}
	roots := sb.writableRoots()
	if entry, why, ok := guard.Follows(p, roots, callerHomes(), sb.spec.protected()); ok {
		return entry, why, true
	}
	return "", "", false
}

// plantingAllowed says whether Config.AllowPlanting leaves the protected
// entry rel (relative to its root) writable.
func (sb *Sandbox) plantingAllowed(rel string) bool {
	return slices.Contains(sb.spec.AllowPlanting, rel) || slices.Contains(sb.spec.AllowPlanting, path.Base(rel))
}

// writableRoots are the host directories sb's commands may write in.
func (sb *Sandbox) writableRoots() []string {
	var roots []string
	if sb.spec.Workspace != "" {
		roots = append(roots, sb.spec.Workspace)
	}
	roots = append(roots, sb.spec.Writable...)
	for _, b := range sb.spec.Binds {
		if !b.ReadOnly {
			roots = append(roots, b.Source)
		}
	}
	return roots
}
