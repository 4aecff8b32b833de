package corral

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/internal/pathtree"
)

// openChangeset opens the changeset c.Changeset names, creating it over the
// workspace and the ChangesetPaths when missing. It runs after resolve
// because it writes: a new changeset records its baseline.
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
	roots := s.changesetRoots()
	cs, err := changeset.Open(dir)
	if errors.Is(err, changeset.ErrNotChangeset) {
		cs, err = changeset.Create(dir, roots...)
	}
	if err != nil {
		return &SetupError{Layer: LayerOverlay, Path: dir, Err: err}
	}
	if err := checkChangesetRoots(cs, roots, c.Changeset); err != nil {
		return err
	}
	s.Changeset = cs
	return nil
}

// checkChangesetRoots refuses a changeset that records other directories
// than the sandbox would overlay: one left out would be written directly
// while its changes wait in the changeset, one added has no baseline.
func checkChangesetRoots(cs *changeset.Changeset, roots []string, value string) error {
	reason, workspace := cs.RootsProblem(roots)
	switch {
	case reason == "":
		return nil
	case workspace:
		return &ConfigError{Field: "Changeset", Value: value, Reason: reason}
	}
	return &ConfigError{Field: "ChangesetPaths", Value: value, Reason: reason}
}

// resolveOverlaid checks the writable paths a changeset overlays besides
// the workspace.
func (s *spec) resolveOverlaid(c Config) error {
	if len(c.ChangesetPaths) == 0 {
		return nil
	}
	if c.Changeset == "" {
		return &ConfigError{Field: "ChangesetPaths", Value: strings.Join(c.ChangesetPaths, ", "), Reason: "needs Changeset"}
	}
	paths, err := canonicalAll("ChangesetPaths", c.ChangesetPaths)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if reason := s.overlaidProblem(p, paths); reason != "" {
			return &ConfigError{Field: "ChangesetPaths", Value: p, Reason: reason}
		}
	}
	s.Overlaid = paths
	return nil
}

// overlaidProblem says what keeps p from being overlaid, or "".
func (s *spec) overlaidProblem(p string, all []string) string {
	switch {
	case !slices.Contains(s.Writable, p):
		return "not one of WritablePaths"
	case pathtree.Within(p, s.Workspace):
		return "lies inside the workspace, which the changeset overlays already"
	case pathtree.Within(s.Workspace, p):
		return "contains the workspace: the changeset's directories must not overlap"
	}
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return "not a directory: overlayfs mounts directories only"
	}
	for _, q := range all {
		if q != p && pathtree.Within(p, q) {
			return "lies inside " + q + ", also in ChangesetPaths: the changeset's directories must not overlap"
		}
	}
	return ""
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
	writable := append(append([]string{s.Workspace}, s.Writable...), s.writableSources()...)
	if reason := changeset.PlaceProblem(dir, writable); reason != "" {
		return &ConfigError{Field: "Changeset", Value: dir, Reason: reason}
	}
	return nil
}
