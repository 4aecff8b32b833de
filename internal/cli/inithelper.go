package cli

import (
	"os"
	"path/filepath"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/pathtree"
)

// initHelperName is the small dedicated init binary (cmd/corral-init) that
// the CLI's sandboxes run their init from when it lies next to corral.
const initHelperName = "corral-init"

// withInitHelper points cfg's sandboxes at corral-init next to this binary,
// when neither cfg nor CORRAL_HELPER chose a helper already: an init run
// from it starts in about half the time of one run from corral itself,
// which links the whole CLI. Without it, or when it lies where a command
// of this sandbox may write (a file a command could have replaced must not
// build the next sandbox), corral runs the inits itself.
func withInitHelper(cfg corral.Config) corral.Config {
	if cfg.Helper != "" || os.Getenv(corral.HelperEnv) != "" {
		return cfg
	}
	if h := siblingInit(); h != "" && !writableIn(cfg, h) {
		cfg.Helper = h
	}
	return cfg
}

// siblingInit is corral-init's path next to this executable, resolved,
// or "" when there is none (or it cannot be executed).
func siblingInit() string { return sibling(initHelperName) }

// sibling is the path of the executable file name next to this
// executable, resolved, or "" when there is none.
func sibling(name string) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return ""
	}
	path := filepath.Join(filepath.Dir(exe), name)
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ""
	}
	return path
}

// writableIn reports whether path lies under a path cfg's commands may
// write on the host: its workspace, writable paths and binds, and the
// directories its changes are kept in.
func writableIn(cfg corral.Config, path string) bool {
	dirs := append([]string{cfg.Workspace, cfg.Changeset, cfg.PersistHome, cfg.PersistTmp}, cfg.WritablePaths...)
	for _, b := range cfg.Binds {
		if !b.ReadOnly {
			dirs = append(dirs, b.Source)
		}
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		if pathtree.Within(path, d) {
			return true
		}
	}
	return false
}
