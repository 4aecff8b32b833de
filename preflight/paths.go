package preflight

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/zones"
)

type pathResult struct {
	name string
	err  error
}

// pathChecks checks that each path the agent is to use exists and that
// the caller (whose uid the sandbox runs as) has the access it needs:
// read (and search, for a directory) everywhere, write where it is to
// write.
func pathChecks(c corral.Config, a *zones.Access) []pathResult {
	var out []pathResult
	if c.Mode != corral.ModeDisabled && c.Workspace != "" {
		out = append(out, pathResult{"workspace", usable(c.Workspace, true)})
	}
	for _, p := range c.WritablePaths {
		out = append(out, pathResult{"writable " + p, usable(p, true)})
	}
	for _, p := range c.ReadOnlyPaths {
		out = append(out, pathResult{"read-only " + p, usable(p, false)})
	}
	for _, z := range a.Zones() {
		err := usable(z.Path, z.Mode == zones.ReadWrite)
		if err == nil {
			err = isDir(z.Path)
		}
		out = append(out, pathResult{fmt.Sprintf("zone %s (%s)", z.Name, z.Mode), err})
	}
	return out
}

// usable reports whether p exists and the caller may read it, and write
// it when write is set.
func usable(p string, write bool) error {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s does not exist", p)
		}
		return err
	}
	mode := uint32(unix.R_OK)
	if fi.IsDir() {
		mode |= unix.X_OK
	}
	if err := unix.Access(p, mode); err != nil {
		return fmt.Errorf("%s is not readable: %w", p, err)
	}
	if write {
		if err := unix.Access(p, unix.W_OK); err != nil {
			return fmt.Errorf("%s is not writable: %w", p, err)
		}
	}
	return nil
}

func isDir(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", p)
	}
	return nil
}
