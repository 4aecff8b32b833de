package nsjail

import "github.com/corralhq/corral/internal/guard"

// gitPart tells whether a new entry at pl, in directory dir, whose name no
// listed name protects there, is staged all the same: a HEAD that would
// make its directory a git directory on the host (guard.Session.StagesHead),
// or any name in the host's placeholder of a staged directory
// (inPlaceholder). mkdir leaves a directory named HEAD alone: it is no
// git's HEAD.
func (c *creator) gitPart(pl place, dir string) (string, string, bool) {
	if pl.name == guard.HeadName && c.sess.StagesHead(pl.dir, dir) {
		return dir, guard.HeadName, true
	}
	return c.inPlaceholder(pl)
}

// inPlaceholder tells whether pl's directory is the host's placeholder of
// a directory staged while the command runs, reached through a descriptor
// the command took before the tmpfs covered it
// (guard.Session.InPlaceholder): whatever is made there is staged too, so
// nothing reaches the host's directory that way. It returns the
// directory's path and the name it was staged under.
func (c *creator) inPlaceholder(pl place) (string, string, bool) {
	if name, ok := c.sess.InPlaceholder(pl.dir); ok {
		return dirPath(pl.dir), name, true
	}
	return "", "", false
}
