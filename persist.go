package corral

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/corralhq/corral/internal/flock"
	"github.com/corralhq/corral/internal/pathtree"
)

// resolvePersist validates PersistHome and PersistTmp, creates their
// directories and hides their host paths from the command.
func (s *spec) resolvePersist(c Config) error {
	if c.PersistHome == "" && c.PersistTmp == "" {
		return nil
	}
	if s.Mode == ModeDisabled {
		return &ConfigError{Field: "PersistHome", Reason: "a persistent home or /tmp needs the sandbox, which Mode disables"}
	}
	if c.PersistHome != "" {
		dir, err := s.persistDir("PersistHome", c.PersistHome)
		if err != nil {
			return err
		}
		homes := callerHomes()
		if len(homes) == 0 {
			return &ConfigError{Field: "PersistHome", Value: c.PersistHome, Reason: "the caller has no home directory to layer it over"}
		}
		for _, sub := range []string{"upper", "work"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
				return &ConfigError{Field: "PersistHome", Value: c.PersistHome, Reason: "cannot be created", Err: err}
			}
		}
		s.PersistHome, s.Home = dir, homes[0]
	}
	if c.PersistTmp != "" {
		dir, err := s.persistDir("PersistTmp", c.PersistTmp)
		if err != nil {
			return err
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return &ConfigError{Field: "PersistTmp", Value: c.PersistTmp, Reason: "cannot be made private", Err: err}
		}
		s.PersistTmp = dir
	}
	return nil
}

// persistDir creates dir when missing and checks that no command can reach
// it: it must lie outside every writable root, and is hidden.
func (s *spec) persistDir(field, dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", &ConfigError{Field: field, Value: dir, Reason: "want an absolute path"}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", &ConfigError{Field: field, Value: dir, Reason: "cannot be created", Err: err}
	}
	real, err := canonical(field, dir)
	if err != nil {
		return "", err
	}
	for _, w := range append([]string{s.Workspace}, s.Writable...) {
		if pathtree.Within(real, w) || pathtree.Within(w, real) {
			return "", &ConfigError{Field: field, Value: dir, Err: ErrRefusedPath,
				Reason: fmt.Sprintf("overlaps the writable path %s, through which a command could change it", w)}
		}
	}
	if !slicesWithin(real, s.Hidden) {
		s.Hidden = append(s.Hidden, real)
	}
	return real, nil
}

func slicesWithin(p string, bases []string) bool {
	for _, b := range bases {
		if pathtree.Within(p, b) {
			return true
		}
	}
	return false
}

// persistRefusal is the error of a sandbox with a persistent home or /tmp
// on a rung without mount namespaces.
func (s *spec) persistRefusal(rung Rung) error {
	return &SetupError{Layer: LayerMountNS, Err: fmt.Errorf(
		"a persistent home or /tmp needs a mount namespace, which rung %s does not have", rung)}
}

// hasPersist reports whether the sandbox keeps a home or /tmp.
func (s *spec) hasPersist() bool { return s.PersistHome != "" || s.PersistTmp != "" }

// lockPersist takes the persistent home's lock for one command: overlayfs
// does not support two live mounts of one upper directory.
func (s *spec) lockPersist() (func(), error) {
	if s.PersistHome == "" {
		return func() {}, nil
	}
	return flock.Lock(s.PersistHome)
}
