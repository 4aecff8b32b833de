package corral

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/corralhq/corral/changeset"
)

// openChangeset opens the changeset c.Changeset names, creating it over the
// workspace when missing. It runs after resolve because it writes: a new
// changeset records its baseline.
func (s *spec) openChangeset(c Config) error {
	if c.Changeset == "" {
		return nil
	}
	abs, err := s.changesetPath(c.Changeset)
	if err != nil {
		return err
	}
	dir, err := s.makeChangesetDir(abs)
	if err != nil {
		return err
	}
	cs, err := changeset.Open(dir)
	if errors.Is(err, changeset.ErrNotChangeset) {
		cs, err = changeset.Create(dir, s.Workspace)
	}
	if err != nil {
		return &SetupError{Layer: "overlay", Path: dir, Err: err}
	}
	if cs.Lower() != s.Workspace {
		return &ConfigError{Field: "Changeset", Value: c.Changeset, Reason: "records changes to " + cs.Lower() + ", not to the workspace"}
	}
	s.Changeset = cs
	return nil
}

// checkChangesetMode refuses a changeset that would not be mounted: without
// overlayfs the command would write to the real files.
func checkChangesetMode(s *spec, value string) error {
	switch {
	case s.Mode == ModeDisabled:
		return &ConfigError{Field: "Changeset", Value: value, Reason: "needs Mode enabled: a disabled sandbox writes to the real files"}
	case runtime.GOOS != "linux":
		return &ConfigError{Field: "Changeset", Value: value, Reason: "needs overlayfs, which only Linux has"}
	}
	return nil
}

// changesetPath checks where the changeset named p would be and returns
// that path, absolute, and free of symlinks once it exists. It creates
// nothing: Resolved uses it too.
func (s *spec) changesetPath(p string) (string, error) {
	if err := checkChangesetMode(s, p); err != nil {
		return "", err
	}
	if strings.ContainsRune(p, 0) {
		return "", &ConfigError{Field: "Changeset", Value: p, Reason: "contains a NUL byte"}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", &ConfigError{Field: "Changeset", Value: p, Reason: err.Error()}
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, s.checkChangesetPlace(abs)
}

// makeChangesetDir creates the directory when missing and checks its place
// again once every symlink is resolved.
func (s *spec) makeChangesetDir(abs string) (string, error) {
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", &ConfigError{Field: "Changeset", Value: abs, Reason: "cannot be created", Err: err}
	}
	dir, err := canonical("Changeset", abs)
	if err != nil {
		return "", err
	}
	return dir, s.checkChangesetPlace(dir)
}

// checkChangesetPlace keeps the changeset out of every writable path, where
// the command could edit its upper directory behind overlayfs's back, and
// the workspace out of the changeset.
func (s *spec) checkChangesetPlace(dir string) error {
	for _, w := range append([]string{s.Workspace}, s.Writable...) {
		if within(dir, w) {
			return &ConfigError{Field: "Changeset", Value: dir, Reason: "lies inside the writable path " + w}
		}
		if within(w, dir) {
			return &ConfigError{Field: "Changeset", Value: dir, Reason: "contains the writable path " + w}
		}
	}
	return nil
}
