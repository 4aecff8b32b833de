package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/pathtree"
)

// initHelperName is the small dedicated init binary (cmd/corral-init) that
// the CLI's sandboxes run their init from when it lies next to corral.
const initHelperName = "corral-init"

// withInitHelper points cfg's sandboxes at corral-init next to this binary,
// when neither cfg nor CORRAL_HELPER chose a helper already: an init run
// from it starts in about half the time of one run from corral itself,
// which links the whole CLI. Without it, when it lies where a command of
// this sandbox may write (a file a command could have replaced must not
// build the next sandbox), or when another user could have put it there or
// replace it (a corral copied into /tmp), corral runs the inits itself.
func withInitHelper(cfg corral.Config) corral.Config {
	if cfg.Helper != "" || os.Getenv(corral.HelperEnv) != "" {
		return cfg
	}
	if h := siblingInit(); h != "" && !writableIn(cfg, h) && othersMayReplace(h) == "" {
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

// othersMayReplace says why a user other than this one (or root) could
// have put the file at path there or could replace it, or "" when none
// can: the file and every directory above it must belong to this user or
// root, and none may be writable by group or others, except a directory
// with the sticky bit (/tmp), where only an entry's owner can replace it.
func othersMayReplace(path string) string { return replaceableBy(path, uint32(os.Geteuid())) }

// replaceableBy is othersMayReplace for the user uid.
func replaceableBy(path string, uid uint32) string {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			return err.Error()
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return "cannot read the owner of " + p
		}
		switch {
		case st.Uid != uid && st.Uid != 0:
			return fmt.Sprintf("%s belongs to another user (uid %d)", p, st.Uid)
		case fi.Mode().Perm()&0o022 != 0 && (p == path || fi.Mode()&os.ModeSticky == 0):
			return fmt.Sprintf("others may write %s", p)
		}
		if filepath.Dir(p) == p {
			return ""
		}
	}
}
