//go:build unix

package corral

import (
	"os"
	"path/filepath"

	"github.com/corralhq/corral/internal/lookpath"
	"github.com/corralhq/corral/internal/pathtree"
)

// lookPath finds the executable name stands for, for a command that runs
// in dir with environment env on the host's own file tree (as the Seatbelt
// backend does). Hidden paths count as missing, since the command cannot
// see them. It returns ErrNotFound or ErrNotExecutable.
func lookPath(name, dir string, env []string, hidden []string) (string, error) {
	return lookpath.Find(name, dir, env, func(p string) (os.FileInfo, error) { return visibleStat(p, hidden) })
}

// visibleStat stats p unless it resolves into a hidden path.
func visibleStat(p string, hidden []string) (os.FileInfo, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	for _, h := range hidden {
		if pathtree.Within(real, h) {
			return nil, os.ErrNotExist
		}
	}
	return os.Stat(real)
}
