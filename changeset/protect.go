package changeset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/corralhq/corral/internal/guard"
)

// Protection is the protected entry a change lies in: a name that makes a
// program on the host run code (git's hooks and config, an editor's tasks,
// a shell's start-up file), as the sandbox's guard protects it.
type Protection struct {
	// Path is the entry, relative to the change's root: ".git",
	// "sub/.vscode".
	Path string
	// What names the program that runs code from it.
	What string
}

// Protected returns the protected entry that p, a path relative to a root
// with slashes, is or lies in: the names of the guard's list, then extra
// (as corral.Config.Protect names them). A name listed for every depth
// matches any of p's components; the others, at the top of the root only.
// The outermost match wins.
func Protected(p string, extra ...string) (Protection, bool) {
	return protectedIn(p, extra, nil)
}

// protectedIn is Protected, remembering in memo (when not nil) the answer
// for each directory on the way: a deep tree's changes then cost one
// lookup per name, not one per name and depth.
func protectedIn(p string, extra []string, memo map[string]Protection) (Protection, bool) {
	if p == "." || p == "" {
		return Protection{}, false
	}
	if pr, ok := memo[p]; ok && pr.Path != "" {
		return pr, true
	}
	dir := path.Dir(p)
	if pr, ok := memo[dir]; ok {
		if pr.Path != "" {
			return pr, true
		}
	} else if pr, ok := protectedIn(dir, extra, memo); ok {
		return pr, true
	}
	pr, ok := protectedName(p, extra)
	if memo != nil {
		memo[p] = pr
	}
	return pr, ok
}

// protectedName says whether p's last name is protected, or p itself at
// the top of the root.
func protectedName(p string, extra []string) (Protection, bool) {
	name := path.Base(p)
	if e, ok := guard.Lookup(name); ok && e.Anywhere {
		return Protection{Path: p, What: e.What}, true
	}
	if e, ok := guard.Lookup(p); ok && !e.Anywhere {
		return Protection{Path: p, What: e.What}, true
	}
	for _, n := range extra {
		if _, listed := guard.Lookup(n); listed {
			continue
		}
		if e := guard.UserEntry(n); e.Anywhere && e.Matches(name) || !e.Anywhere && n == p {
			return Protection{Path: p, What: e.What}, true
		}
	}
	return Protection{}, false
}

// guarded sorts a root's changes for Apply: those outside protected
// entries go to the applier as they are; a git directory the command
// changed goes to the guard's allowlisted merge; anything else protected
// is held (written under HeldDir instead of its place), and a deletion in
// it is not applied.
type guarded struct {
	plain   []Change          // applied as they are
	held    []Change          // applied under held paths; Path is the held one
	src     map[string]string // held path -> path in the upper directory
	gitDirs []string          // git directories to merge, parents first
	lines   []string          // one per held entry and kept deletion
	guarded []Change          // every change the guard took, as listed
}

// heldPath is where a protected entry at rel is held: in HeldDir/stamp,
// named as the sandbox's guard names what it holds.
func heldPath(stamp, rel string) string {
	return path.Join(guard.HeldDir, stamp, "held-"+strings.ReplaceAll(strings.ReplaceAll(rel, "%", "%25"), "/", "%2F"))
}

// heldStamp names the directory of one Apply's held entries.
func heldStamp() string { return time.Now().UTC().Format("20060102T150405.000000000") }

// guardChanges sorts changes (one root's, parents first) by what Apply
// does with each (see guarded). mergeable reports whether the git
// directory at a path can go through the allowlisted merge.
func guardChanges(root, upper string, changes []Change, opts ApplyOptions, stamp string, mergeable func(string) bool) *guarded {
	g := &guarded{src: map[string]string{}}
	seen := map[string]bool{}
	memo := map[string]Protection{}
	var kept []string
	for _, d := range repositories(upper, changes, opts.Protect) {
		memo[d] = Protection{Path: d, What: headWhat}
	}
	for _, ch := range changes {
		pr, ok := protectedIn(ch.Path, opts.Protect, memo)
		if !ok || slices.Contains(opts.AllowPlanting, path.Base(pr.Path)) || slices.Contains(opts.AllowPlanting, pr.Path) {
			g.plain = append(g.plain, ch)
			continue
		}
		g.guarded = append(g.guarded, ch)
		shown := path.Join(root, pr.Path)
		switch {
		case path.Base(pr.Path) == guard.GitDir && mergeable(pr.Path):
			if !seen[pr.Path] {
				seen[pr.Path] = true
				g.gitDirs = append(g.gitDirs, pr.Path)
			}
		case ch.Status == Deleted:
			kept = append(kept, ch.Path)
			g.lines = append(g.lines, fmt.Sprintf("%s: deletion not applied, a protected entry (%s)", Quote(ch.RealPath()), pr.What))
		default:
			h := heldPath(stamp, pr.Path) + strings.TrimPrefix(ch.Path, pr.Path)
			g.src[h] = ch.Path
			held := ch
			held.Path, held.Status, held.OldType, held.OldSize, held.OldMode = h, Added, "", 0, 0
			g.held = append(g.held, held)
			if !seen[pr.Path] {
				seen[pr.Path] = true
				g.lines = append(g.lines, fmt.Sprintf("%s: held in %s, a protected entry (%s)",
					Quote(shown), Quote(path.Join(root, heldPath(stamp, pr.Path))), pr.What))
			}
		}
	}
	g.keepAround(root, kept)
	return g
}

// mergeable reports whether the git directory at rel can go through the
// allowlisted merge: the upper directory holds it as a directory that does
// not replace the host's, and the host has a directory there or nothing.
// Anything else (a .git file, a symlink, a git directory made anew) is held.
func (r Root) mergeable(rel string) bool {
	if !canMergeGit {
		return false
	}
	up := filepath.Join(r.Upper, filepath.FromSlash(rel))
	fi, err := os.Lstat(up)
	if err != nil || !fi.IsDir() || isOpaque(up) {
		return false
	}
	hi, err := os.Lstat(filepath.Join(r.Path, filepath.FromSlash(rel)))
	return err == nil && hi.IsDir() || errors.Is(err, fs.ErrNotExist)
}

// mergeGitDir lands the upper's git directory rel through the allowlist,
// making the host's when it has none, and returns what was left out.
func (p *rootPlan) mergeGitDir(rel string, roots []string) []string {
	host := filepath.Join(p.r.Path, filepath.FromSlash(rel))
	if err := p.dir.Mkdir(rel, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return []string{fmt.Sprintf("%s: all changes (%v)", Quote(host), err)}
	}
	// Merge opens the host's directory by its path: no symlink may lie on
	// the way, or it would write beyond the root.
	if real, err := filepath.EvalSymlinks(host); err != nil || real != host {
		return []string{fmt.Sprintf("%s: all changes (the path is not a directory of its own in %s)", Quote(host), Quote(p.r.Path))}
	}
	return mergeGit(filepath.Join(p.r.Upper, filepath.FromSlash(rel)), host, roots)
}

// hold writes the held changes under their held paths, making the
// directories on the way (HeldDir, the stamp's, a held directory whose
// entries alone changed) private.
func (a *applier) hold(changes []Change) error {
	for _, ch := range changes {
		if err := a.parents(ch.Path); err != nil {
			return fmt.Errorf("%s: %w", Quote(ch.RealPath()), err)
		}
	}
	return a.run(changes)
}

func (a *applier) parents(p string) error {
	parts := strings.Split(path.Dir(p), "/")
	for i := range parts {
		d := strings.Join(parts[:i+1], "/")
		if fi, err := a.root.Lstat(d); err == nil && fi.IsDir() {
			continue
		}
		if err := a.root.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// headWhat is why a directory a changed HEAD makes a repository is
// protected.
const headWhat = "git: its HEAD makes it a repository, whose config and hooks git on the host would run"

// repositories are the directories that a new or changed HEAD in upper
// makes a git directory (a bare repository) git on the host would take,
// outside the protected entries: each is held whole, as the guard holds a
// repository a command makes. At the top of the root it is the HEAD alone
// (the root itself is no entry to hold).
func repositories(upper string, changes []Change, extra []string) []string {
	var out []string
	for _, ch := range changes {
		if path.Base(ch.Path) != guard.HeadName || ch.Status == Deleted {
			continue
		}
		if _, ok := Protected(ch.Path, extra...); ok {
			continue
		}
		dir := path.Dir(ch.Path)
		if !guard.GitDirAt(filepath.Join(upper, filepath.FromSlash(dir))) {
			continue
		}
		if dir == "." {
			dir = ch.Path
		}
		out = append(out, dir)
	}
	return out
}

// keepAround takes out of the plain changes those that would remove a
// protected entry whose deletion is not applied along with a directory
// around it: the directory's deletion, or its replacement by a file.
func (g *guarded) keepAround(root string, kept []string) {
	if len(kept) == 0 {
		return
	}
	plain := g.plain[:0]
	for _, ch := range g.plain {
		removes := ch.Status == Deleted || ch.Status == Replaced && ch.Type != Dir
		i := slices.IndexFunc(kept, func(k string) bool { return strings.HasPrefix(k, ch.Path+"/") })
		if !removes || i < 0 {
			plain = append(plain, ch)
			continue
		}
		g.guarded = append(g.guarded, ch)
		g.lines = append(g.lines, fmt.Sprintf("%s: not applied, it would remove the protected entry %s", Quote(ch.RealPath()), Quote(path.Join(root, kept[i]))))
	}
	g.plain = plain
}
