package seatbelt

import (
	"os"
	"path/filepath"
)

// LocateProtected decides, on this machine, what a profile must cover to
// keep the protected path p read-only. It is meant for [Input.Locate].
//
// A path whose parent directory exists is covered, whether or not the path
// itself exists: an existing .git keeps .git/hooks from being created, and
// a workspace keeps .bashrc from being created. A path whose parent is
// missing is skipped, so that git init and git clone still work in an empty
// workspace (the Linux backend likewise protects only what exists).
//
// Seatbelt matches the resolved path of an access, so when p lies behind a
// symlink, or is one, the place a write through p would land is covered
// too; p itself stays covered so that the link cannot be replaced.
func LocateProtected(p string) []string {
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || !fi.IsDir() {
		return nil
	}
	if real := landing(p, maxHops); real != p {
		return []string{p, real}
	}
	return []string{p}
}

// maxHops bounds how many dangling symlinks landing follows.
const maxHops = 8

// landing returns where a write to p lands: p with every symlink resolved,
// following a final symlink even when its target does not exist yet (a
// write through it would create the target).
func landing(p string, hops int) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	dir, base := filepath.Split(p)
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return p // nothing there yet: covered as written
	}
	q := filepath.Join(realDir, base)
	target, err := os.Readlink(q)
	if err != nil || hops == 0 {
		return q
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(realDir, target)
	}
	return landing(filepath.Clean(target), hops-1)
}
