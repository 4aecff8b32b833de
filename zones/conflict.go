package zones

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/corralhq/corral/changeset"
)

// ConflictError is Review's refusal when a file the command changed was
// changed by another writer since the command began: another worker whose
// reviewed changes to the same zone landed first, or the host. Nothing
// was applied, in any zone; the command's changes still wait in the
// worker's changeset. Discard them and run the command again over the
// files as they are now.
type ConflictError struct {
	// Paths are the files, as the worker names them (/NAME/rel/path).
	Paths []string
	// Reviewed is what the policies and the Approver decided before the
	// conflict was found; none of it was applied.
	Reviewed *Reviewed
	// Err is the changeset's own refusal, naming the host paths.
	Err *changeset.ConflictError
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s changed since the command began (another writer's change landed first): "+
		"nothing was applied and the command's changes still wait; discard them and run the command again",
		strings.Join(e.Paths, ", "))
}

func (e *ConflictError) Unwrap() error { return e.Err }

// conflict turns the changeset's refusal into a *ConflictError naming the
// worker's paths; other errors pass unchanged.
func (a *Access) conflict(err error, rv *Reviewed) error {
	var ce *changeset.ConflictError
	if !errors.As(err, &ce) {
		return err
	}
	out := &ConflictError{Reviewed: rv, Err: ce}
	for _, c := range ce.Conflicts {
		p := c.RealPath()
		if z, ok := a.zoneAt(c.Root); ok {
			p = path.Join("/", z.Name, c.Path)
		}
		out.Paths = append(out.Paths, changeset.Quote(p))
	}
	return out
}
