package nsjail

import "github.com/corralhq/corral/internal/guard"

// protects tells whether the creator stages (or refuses) a new entry at pl,
// in directory dir: a protected name (guard.Session.Protects), or a HEAD
// that would make its directory a git directory on the host
// (guard.Session.StagesHead). A directory named HEAD is no git's HEAD, and
// mkdir asks Protects alone.
func (c *creator) protects(pl place, dir string) (string, bool) {
	if name, ok := c.protectsDir(pl, dir); ok {
		return name, true
	}
	if pl.name == guard.HeadName && c.sess.StagesHead(pl.dir, dir) {
		return guard.HeadName, true
	}
	return "", false
}

// holdsProtected is guard.Session.HoldsProtected with HEAD as in protects:
// nothing is renamed onto a HEAD, or exchanged with one, but a regular file
// copied into a staged one.
func (c *creator) holdsProtected(pl place, dir string) (string, bool) {
	if name, ok := c.sess.HoldsProtected(dir, pl.name); ok {
		return name, true
	}
	if name, ok := c.sess.InPlaceholder(pl.dir, dir); ok {
		return name, true
	}
	if pl.name == guard.HeadName && c.sess.StagesHead(pl.dir, dir) {
		return guard.HeadName, true
	}
	return "", false
}

// protectsDir tells whether a new directory at pl is staged: a protected
// name, or any name in the host's placeholder of a staged directory, which
// a descriptor the command took before the tmpfs covered it reaches
// (guard.Session.InPlaceholder).
func (c *creator) protectsDir(pl place, dir string) (string, bool) {
	if name, ok := c.sess.Protects(dir, pl.name); ok {
		return name, true
	}
	return c.sess.InPlaceholder(pl.dir, dir)
}
