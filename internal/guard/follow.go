package guard

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corralhq/corral/internal/pathtree"
)

// follower collects what programs on the host follow out of a protected
// entry, or git runs from a worktree, where it lies in a writable root:
// such a path is protected like the entry (linked). The guard's session
// collects it for the command (at the start for the top of each root, and
// for a nested worktree when a call first writes below its top); Follows
// collects it for a single write made outside the sandbox, by an agent's
// file tool.
type follower struct {
	linked []string
	why    map[string]string // each linked path: what follows it
	homes  []string          // the caller's homes (see Session.SetHomes)
	// ignored, when set, tells an entry of root r the guard leaves alone.
	ignored func(r, p string) bool
}

// add records p, a path in a writable root, as linked.
func (f *follower) add(p, why string) {
	if slices.Contains(f.linked, p) {
		return
	}
	f.linked = append(f.linked, p)
	if f.why == nil {
		f.why = map[string]string{}
	}
	f.why[p] = why
}

// maxLinked bounds the entries looked at inside one protected directory at
// the start: a protected directory is a configuration, not a project.
const maxLinked = 1000

// linkTargets records the targets in a writable root of p, an entry at the
// top of worktree or root r, when it is a symlink, or of the symlinks
// inside it, when it is a directory (not a git directory's, which hooksOf
// looks at).
func (f *follower) linkTargets(r, p string, roots []string, git bool) {
	fi, err := os.Lstat(p)
	if err != nil || f.ignored != nil && f.ignored(r, p) {
		return
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if git {
			return // a git directory elsewhere: staged by its HEAD when written
		}
		f.link(p, roots)
	case fi.IsDir():
		if git {
			return
		}
		n := 0
		filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if n++; err != nil || n > maxLinked {
				return filepath.SkipAll
			}
			if d.Type()&fs.ModeSymlink != 0 {
				f.link(q, roots)
			}
			return nil
		})
	}
}

// link records the target of symlink p when it lies in a writable root,
// whether it exists or not: one missing is where a command would make it.
func (f *follower) link(p string, roots []string) {
	if t := resolved(p); t != "" && inRoots(t, roots) {
		f.add(t, "the target of "+p+", which the host's programs follow")
	}
}

// resolved is p with every symlink resolved, as far as it exists: the
// rest, missing, is joined as it is named. "" when that cannot be told
// (a loop, a link too long, too many links).
func resolved(p string) string {
	for range 40 {
		if t, err := filepath.EvalSymlinks(p); err == nil {
			return t
		}
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			// A link whose target is missing: follow it by name.
			t, err := os.Readlink(p)
			if err != nil {
				return ""
			}
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(p), t)
			}
			p = filepath.Clean(t)
		case err == nil:
			return "" // it exists, yet does not resolve
		default:
			dir := filepath.Dir(p)
			if dir == p {
				return ""
			}
			d := resolved(dir)
			if d == "" {
				return ""
			}
			return filepath.Join(d, filepath.Base(p))
		}
	}
	return ""
}

// hooksOf records what git runs from the worktree whose top is r (the top
// of a root, or a nested worktree's): the targets of symlinks among its
// hooks, the directory its core.hooksPath names, with the symlinks there,
// and what its config and the caller's make git run or read.
func (f *follower) hooksOf(r string, roots []string) {
	gitdir, config := worktreeGit(r)
	if gitdir == "" {
		return
	}
	f.linkTargets(r, path.Join(config, "hooks"), roots, false)
	b, err := os.ReadFile(path.Join(config, "config"))
	if err != nil {
		return
	}
	entries, err := ParseConfig(b)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Key != "core.hookspath" || e.Value == "" {
			continue
		}
		hp := e.Value
		if !path.IsAbs(hp) {
			hp = path.Join(r, hp) // relative to the worktree's top, where hooks run
		}
		if t, err := filepath.EvalSymlinks(hp); err == nil && inRoots(t, roots) {
			f.add(t, "the hooks directory core.hooksPath of "+r+" names, whose scripts git runs")
			f.linkTargets(r, t, roots, false)
		}
	}
	f.configRuns(entries, r, config, roots)
	// The user's and the system's config define drivers for every
	// repository (nbstripout --install --global): run from this worktree's
	// top too.
	for _, c := range f.globalConfigs() {
		if b, err := os.ReadFile(c); err == nil {
			if g, err := ParseConfig(b); err == nil {
				f.configRuns(g, r, path.Dir(c), roots)
			}
		}
	}
}

// configRuns protects what config entries make git run from the worktree
// whose top is r, or read as config, where it lies in a writable root,
// made by the command or not: a driver's script, an included file
// (relative to dir, the config file's directory).
func (f *follower) configRuns(entries []ConfigEntry, r, dir string, roots []string) {
	for _, p := range ConfigRuns(entries) {
		if rest, ok := strings.CutPrefix(p, GitDirToken+"/"); ok {
			p = path.Join(dir, rest)
		} else if !path.IsAbs(p) {
			p = path.Join(r, p)
		}
		if t, err := filepath.EvalSymlinks(p); err == nil {
			p = t
		}
		if inRoots(p, roots) && p != r {
			f.add(p, "a program or file git's configuration makes it run or read from "+r)
		}
	}
}

// globalConfigs are the git config files that apply to every repository of
// the caller's: the system's, and each home's ~/.gitconfig and
// ~/.config/git/config.
func (f *follower) globalConfigs() []string {
	out := []string{"/etc/gitconfig"}
	for _, h := range f.homes {
		out = append(out, path.Join(h, ".gitconfig"), path.Join(h, ".config/git/config"))
	}
	return out
}

// worktreeGit returns the git directory of the worktree whose top is top
// (its .git directory, or the one a .git file names, as a submodule's or a
// linked worktree's does), and the directory holding its config and hooks
// (the common directory of a linked worktree's); "" when it has none.
func worktreeGit(top string) (gitdir, config string) {
	p := path.Join(top, GitDir)
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return "", ""
	case fi.IsDir():
		gitdir = p
	case fi.Mode().IsRegular():
		gitdir = gitdirNamed(p)
	}
	if gitdir == "" {
		return "", ""
	}
	if c := commondirOf(gitdir); c != "" {
		return gitdir, c
	}
	return gitdir, gitdir
}

// gitdirNamed returns the git directory the .git file p names, resolved,
// or "".
func gitdirNamed(p string) string {
	b, err := os.ReadFile(p)
	if err != nil || len(b) > 4096 {
		return ""
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	t := strings.TrimSpace(v)
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(p), t)
	}
	r, err := filepath.EvalSymlinks(t)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
		return ""
	}
	return r
}

// commondirOf returns the repository a linked worktree's git directory
// shares, or "".
func commondirOf(gitdir string) string {
	b, err := os.ReadFile(path.Join(gitdir, "commondir"))
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(b))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitdir, c)
	}
	r, err := filepath.EvalSymlinks(c)
	if err != nil {
		return ""
	}
	return r
}

func inRoots(p string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return pathtree.Within(p, r) })
}

// Follows reports whether p, a host path in one of roots (writable roots,
// canonical), lies where a program on the host goes through a protected
// entry or git runs from a worktree, as the guard protects for a command
// (docs/layers.md, "What a command touches"): the target of a symlink with
// a protected name at the top of a root or inside a protected directory
// there, a hook that is a symlink, the directory core.hooksPath names,
// what a repository's or the caller's git configuration makes git run or
// read, for the worktree at the top of each root and each nested worktree
// whose top lies on p's way; and a name listed for the top of a root,
// relative to each of homes a root lies in. names are the protected names
// in force. It returns the protected path p lies in and why.
//
// It is for a write made outside the sandbox (an agent's file tool), once
// per write: it reads those few entries each time.
func Follows(p string, roots, homes, names []string) (entry, why string, ok bool) {
	p = path.Clean(p)
	if e, n, ok := homeTop(p, homes, roots, names); ok {
		return e, "relative to the home, " + n + " is " + describeName(n), true
	}
	f := &follower{homes: homes}
	git := slices.Contains(names, GitDir)
	for _, r := range roots {
		for _, n := range names {
			f.linkTargets(r, path.Join(r, n), roots, n == GitDir)
		}
		if git {
			f.hooksOf(r, roots)
		}
		if rel, err := filepath.Rel(r, path.Dir(p)); git && err == nil && filepath.IsLocal(rel) && rel != "." {
			// The nested worktrees on p's way.
			at := r
			for part := range strings.SplitSeq(rel, "/") {
				at = path.Join(at, part)
				f.hooksOf(at, roots)
			}
		}
	}
	for _, t := range f.linked {
		if pathtree.Within(p, t) {
			return t, f.why[t], true
		}
	}
	return "", "", false
}

// homeTop returns the entry a name listed for the top of a root makes of
// p relative to a home that holds one of roots, and the name.
func homeTop(p string, homes, roots, names []string) (entry, name string, ok bool) {
	for _, h := range homes {
		if p == h || !pathtree.Within(p, h) || !slices.ContainsFunc(roots, func(r string) bool { return pathtree.Within(r, h) && r != h }) {
			continue
		}
		rel := strings.TrimPrefix(p, strings.TrimSuffix(h, "/")+"/")
		for _, n := range names {
			if e, ok := Lookup(n); !ok || e.Anywhere {
				continue
			}
			if rel == n || strings.HasPrefix(rel, n+"/") {
				return path.Join(h, n), n, true
			}
		}
	}
	return "", "", false
}

// describeName is what the list says runs code from name.
func describeName(n string) string {
	if e, ok := Lookup(n); ok {
		return "protected (" + e.What + ")"
	}
	return "protected"
}
