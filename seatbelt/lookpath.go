//go:build unix

package seatbelt

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/corralhq/corral/internal/lookpath"
	"github.com/corralhq/corral/internal/pathtree"
)

// LookPath finds the executable name stands for, for a command that runs
// in dir with environment env on the host's own file tree, as a command
// under sandbox-exec does. Hidden paths count as missing, since the
// command cannot see them. It returns lookpath.ErrNotFound or
// lookpath.ErrNotExecutable (corral.ErrNotFound and ErrNotExecutable).
func LookPath(name, dir string, env []string, hidden []string) (string, error) {
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

// Workdir returns a command's working directory: the workspace, or dir
// relative to it, which must be an existing directory; else an [*Error] of
// LayerWorkdir naming it.
func Workdir(workspace, dir string) (string, error) {
	switch {
	case dir == "":
		dir = workspace
	case !filepath.IsAbs(dir):
		dir = filepath.Join(workspace, dir)
	}
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		err = syscall.ENOTDIR
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", &Error{Layer: LayerWorkdir, Path: dir, Err: err}
	}
	return dir, nil
}
