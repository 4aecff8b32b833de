package corral

import (
	"os"
	"path/filepath"

	"github.com/corralhq/corral/internal/pathtree"
)

// HelperEnv is the environment variable that names the init helper when
// Config.Helper is empty (see Config.Helper).
const HelperEnv = "CORRAL_HELPER"

// resolveHelper checks the helper binary chosen by Config.Helper or
// CORRAL_HELPER: an absolute path, resolved once, outside every path a
// command may write.
func (s *spec) resolveHelper(c Config) error {
	field, path := "Helper", c.Helper
	if path == "" {
		field, path = HelperEnv, os.Getenv(HelperEnv)
	}
	if path == "" || s.Mode == ModeDisabled {
		return nil
	}
	if !filepath.IsAbs(path) {
		return &ConfigError{Field: field, Value: path, Reason: "want an absolute path"}
	}
	real, err := canonical(field, path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return &ConfigError{Field: field, Value: path, Reason: "not an executable file"}
	}
	for _, w := range append(append([]string{s.Workspace}, s.Writable...), s.Overlaid...) {
		if pathtree.Within(real, w) {
			return &ConfigError{Field: field, Value: path, Reason: "inside the writable path " + w + ", where a command could replace it"}
		}
	}
	s.Helper = real
	return nil
}
