package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/corralhq/corral/internal/flock"
)

// stateDirs are the directories of one persistent sandbox, under
// <state>/sandboxes/<slug>.
type stateDirs struct {
	root      string
	workspace string // its own workspace (workspace_access none or ro)
	home      string // the layered home's changes (corral.Config.PersistHome)
	tmp       string // its /tmp (corral.Config.PersistTmp)
}

func (rt *Runtime) dirsOf(slug string) stateDirs {
	root := filepath.Join(rt.state, "sandboxes", slug)
	return stateDirs{root: root, workspace: filepath.Join(root, "workspace"),
		home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
}

// DefaultStateDir is $XDG_STATE_HOME/corral, or ~/.local/state/corral when
// XDG_STATE_HOME is unset or not absolute.
func DefaultStateDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "corral"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "corral"), nil
}

// makeWorkspace creates a sandbox's own workspace and copies the bootstrap
// files into it, by base name, those not there yet.
func makeWorkspace(dir string, bootstrap []string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, src := range bootstrap {
		dst := filepath.Join(dir, filepath.Base(src))
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := copyFile(src, dst); err != nil {
			return fmt.Errorf("bootstrap file: %w", err)
		}
	}
	return nil
}

// copyFile copies the regular file src to dst, which must not exist.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "copy", Path: src, Err: errors.New("not a regular file")}
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// wipe removes what a sandbox keeps between commands (its home's changes
// and its /tmp), or, with all, its whole state directory. It does not wait
// for a command running in it: busy reports one holds the home's lock.
func (d stateDirs) wipe(all bool) (busy bool, err error) {
	if _, err := os.Stat(d.home); err == nil {
		unlock, ok, err := flock.TryLock(d.home)
		if err != nil {
			return false, err
		}
		if !ok {
			return true, nil
		}
		defer unlock()
	}
	if all {
		return false, removeAll(d.root)
	}
	if err := removeAll(d.home); err != nil {
		return false, err
	}
	return false, removeAll(d.tmp)
}

// removeAll is os.RemoveAll for trees whose directories the owner cannot
// list: overlayfs makes its work directory with mode 0.
func removeAll(dir string) error {
	filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if de != nil && de.IsDir() && de.Type()&fs.ModeSymlink == 0 {
			os.Chmod(p, 0o700) // before the walk reads it
		}
		return nil
	})
	return os.RemoveAll(dir)
}
