package changeset

import (
	"fmt"
	"slices"
	"strings"

	"github.com/corralhq/corral/internal/pathtree"
)

// PlaceProblem says why a changeset must not be kept in dir beside
// writable, the directories a sandbox's commands can write, or "": inside
// one, a command could edit the upper directories behind overlayfs's back;
// around one, the changeset would hold a directory it overlays.
func PlaceProblem(dir string, writable []string) string {
	for _, w := range writable {
		if pathtree.Within(dir, w) {
			return "lies inside the writable path " + w
		}
		if pathtree.Within(w, dir) {
			return "contains the writable path " + w
		}
	}
	return ""
}

// RootsProblem says why c cannot keep the changes of a sandbox that
// overlays roots (the workspace first), or "": a directory left out would
// be written directly while its changes wait in c, one added has no
// baseline. workspace is true when the workspace itself is not one of c's
// roots.
func (c *Changeset) RootsProblem(roots []string) (reason string, workspace bool) {
	have := c.RootPaths()
	if !slices.Contains(have, roots[0]) {
		return "records changes to " + strings.Join(have, ", ") + ", not to the workspace", true
	}
	if !slices.Equal(slices.Sorted(slices.Values(have)), slices.Sorted(slices.Values(roots))) {
		return fmt.Sprintf("records changes to %s, not to %s: a changeset keeps the directories it began with",
			strings.Join(have, ", "), strings.Join(roots, ", ")), false
	}
	return "", false
}
