package changeset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ApplyOptions adjust Apply.
type ApplyOptions struct {
	// Force applies over originals that changed on the host since the
	// changeset began, losing those changes.
	Force bool
	// Select, when set, picks the changes to apply: the others are
	// discarded with the rest of the upper directory, and only the picked
	// ones are checked for conflicts. A change picked beneath a directory
	// that is new needs that directory picked too.
	Select func(Change) bool
	// AllowPlanting names protected entries applied as they are: a name
	// of the guard's list ("NAME") or an entry's path in its root, as
	// corral.Config.AllowPlanting leaves them writable to commands. Empty
	// by default: every protected entry is guarded (see "Protected entries"
	// in the package documentation).
	AllowPlanting []string
	// Protect names entries protected besides the guard's list, as
	// corral.Config.Protect does.
	Protect []string
}

// Result reports what Apply did.
type Result struct {
	// Applied are the changes written to the real directory, including
	// those found there already.
	Applied []Change
	// Skipped are changes Apply cannot carry out: sockets, fifos and
	// devices.
	Skipped []Change
	// Discarded are the changes ApplyOptions.Select left out.
	Discarded []Change
	// Guarded are the changes to protected entries, not applied as they
	// are: held, kept out, or merged through git's allowlist.
	Guarded []Change
	// Held says, one line each, which protected entries were held and
	// where, and which of their deletions were not applied.
	Held []string
	// Dropped says, one line each, what the merge of a git directory left
	// out and why.
	Dropped []string
}

// Apply writes the changes to the real directories (see "Applying" in the
// package documentation). When an original in any root changed since the
// changeset began it applies nothing, in no root, and returns a
// *ConflictError naming the files, unless opts.Force. An error part-way
// returns what was applied so far; running Apply again finishes the job.
func (c *Changeset) Apply(opts ApplyOptions) (*Result, error) {
	defer longPaths()()
	unlock, err := c.Lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	res, err := c.apply(opts)
	if err != nil {
		return res, &fs.PathError{Op: "apply changeset", Path: c.dir, Err: err}
	}
	return res, nil
}

func (c *Changeset) apply(opts ApplyOptions) (*Result, error) {
	changes, err := c.List()
	if err != nil {
		return nil, err
	}
	res := &Result{}
	if opts.Select != nil {
		picked := changes[:0:0]
		for _, ch := range changes {
			if opts.Select(ch) {
				picked = append(picked, ch)
			} else {
				res.Discarded = append(res.Discarded, ch)
			}
		}
		changes = picked
	}
	// Every root is checked before any is touched, so that a conflict in
	// one keeps the others as they are too.
	stamp := heldStamp()
	plans := make([]*rootPlan, 0, len(c.roots))
	defer func() {
		for _, p := range plans {
			p.dir.Close()
		}
	}()
	var conflicts []Conflict
	for _, r := range c.roots {
		p, err := r.plan(changesOf(changes, r.Path), opts, stamp)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
		conflicts = append(conflicts, p.conflicts...)
	}
	if len(conflicts) > 0 && !opts.Force {
		return nil, &ConflictError{Conflicts: conflicts}
	}
	for _, p := range plans {
		if err := p.apply(res, c.RootPaths()); err != nil {
			return res, err
		}
	}
	return res, nil
}

func changesOf(changes []Change, root string) []Change {
	var out []Change
	for _, ch := range changes {
		if ch.Root == root {
			out = append(out, ch)
		}
	}
	return out
}

// rootPlan is what Apply found in one root before touching anything.
type rootPlan struct {
	r         Root
	dir       *deepRoot // the real directory
	base      baseline
	changes   []Change
	guarded   *guarded
	conflicts []Conflict
	done      map[string]bool // paths that hold their new state already
}

func (r Root) plan(changes []Change, opts ApplyOptions, stamp string) (*rootPlan, error) {
	base, err := r.loadBaseline()
	if err != nil {
		return nil, err
	}
	dir, err := openDeepRoot(r.Path)
	if err != nil {
		return nil, err
	}
	k := &checker{root: dir, upper: r.Upper, base: base, changes: changes}
	conflicts, done, err := k.check()
	if err != nil {
		dir.Close()
		return nil, err
	}
	for i := range conflicts {
		conflicts[i].Root = r.Path
	}
	g := guardChanges(r.Path, r.Upper, changes, opts, stamp, r.mergeable)
	return &rootPlan{r: r, dir: dir, base: base, changes: changes, guarded: g, conflicts: conflicts, done: done}, nil
}

// apply writes the root's changes, then starts it afresh over the new
// originals: those outside protected entries as they are, the held ones
// under HeldDir, then each changed git directory through the allowlist.
func (p *rootPlan) apply(res *Result, roots []string) error {
	g := p.guarded
	a := &applier{root: p.dir, upper: p.r.Upper, done: p.done, res: res}
	start := len(res.Applied)
	if err := a.run(g.plain); err != nil {
		return err
	}
	if len(g.held) > 0 {
		h := &applier{root: p.dir, upper: p.r.Upper, src: g.src, done: map[string]bool{}, res: &Result{}}
		if err := h.hold(g.held); err != nil {
			return err
		}
	}
	res.Guarded = append(res.Guarded, g.guarded...)
	res.Held = append(res.Held, g.lines...)
	for _, d := range g.gitDirs {
		res.Dropped = append(res.Dropped, p.mergeGitDir(d, roots)...)
	}
	touched := slices.Concat(res.Applied[start:], g.held)
	return p.r.settle(p.dir, p.base, touched)
}

// applier writes changes through an os.Root of the real directory.
type applier struct {
	root  *deepRoot
	upper string
	src   map[string]string // a held path's path in upper
	done  map[string]bool
	res   *Result
}

// run applies deletions deepest first, then the rest parents first, then
// directory permissions deepest first, so that a read-only directory gets
// its entries before it loses its write permission.
func (a *applier) run(changes []Change) error {
	for _, ch := range slices.Backward(changes) {
		if ch.Status == Deleted {
			if err := a.step(ch, a.remove); err != nil {
				return err
			}
		}
	}
	for _, ch := range changes {
		if ch.Status != Deleted {
			if err := a.step(ch, a.put); err != nil {
				return err
			}
		}
	}
	for _, ch := range slices.Backward(changes) {
		if ch.Type == Dir {
			if err := a.chmodDir(ch); err != nil {
				return fmt.Errorf("%s: %w", Quote(ch.RealPath()), err)
			}
		}
	}
	return nil
}

func (a *applier) step(ch Change, do func(Change) error) error {
	switch {
	case ch.Status != Deleted && !slices.Contains([]Type{File, Dir, Symlink}, ch.Type):
		a.res.Skipped = append(a.res.Skipped, ch)
		return nil
	case !a.done[ch.Path]:
		if err := do(ch); err != nil {
			return fmt.Errorf("%s: %w", Quote(ch.RealPath()), err)
		}
	}
	a.res.Applied = append(a.res.Applied, ch)
	return nil
}

func (a *applier) remove(ch Change) error {
	err := a.root.RemoveAll(ch.Path)
	if err != nil && isAbsent(err) {
		return nil
	}
	return err
}

func (a *applier) put(ch Change) error {
	switch ch.Type {
	case Dir:
		return a.putDir(ch)
	case Symlink:
		return a.replace(ch, func(tmp string) error { return a.root.Symlink(ch.Target, tmp) })
	}
	return a.replace(ch, func(tmp string) error { return a.copyFile(ch, tmp) })
}

// putDir makes sure ch.Path is a directory. It starts private; chmodDir
// gives it its permissions once its entries are in.
func (a *applier) putDir(ch Change) error {
	fi, err := a.root.Lstat(ch.Path)
	if err == nil && fi.IsDir() {
		return nil
	}
	if err == nil {
		if err := a.root.RemoveAll(ch.Path); err != nil {
			return err
		}
	}
	return a.root.Mkdir(ch.Path, 0o700)
}

// replace makes the new entry under a temporary name beside ch.Path, then
// renames it into place: the path holds the old entry or the new one.
func (a *applier) replace(ch Change, make func(tmp string) error) error {
	tmp := path.Join(path.Dir(ch.Path), tempName())
	if err := make(tmp); err != nil {
		a.root.Remove(tmp)
		return err
	}
	// rename(2) cannot put a file over a directory: that one must go first.
	if fi, err := a.root.Lstat(ch.Path); err == nil && fi.IsDir() {
		if err := a.root.RemoveAll(ch.Path); err != nil {
			a.root.Remove(tmp)
			return err
		}
	}
	if err := a.root.Rename(tmp, ch.Path); err != nil {
		a.root.Remove(tmp)
		return err
	}
	return nil
}

func (a *applier) copyFile(ch Change, tmp string) error {
	from := ch.Path
	if p, ok := a.src[ch.Path]; ok {
		from = p
	}
	src, err := openFile(filepath.Join(a.upper, filepath.FromSlash(from)))
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	dst, err := a.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	err = errors.Join(err, a.keepOwner(ch, dst), dst.Chmod(fs.FileMode(applied(ch.Mode))), dst.Close())
	if err != nil {
		return err
	}
	return a.root.Chtimes(tmp, fi.ModTime(), fi.ModTime())
}

// keepOwner gives the new file of a modified original the original's group,
// and as root its owner too, as an editor saving it in place would: the
// rename would otherwise hand it to whoever applies. A group the user may
// not give is left as it is.
func (a *applier) keepOwner(ch Change, dst *os.File) error {
	if ch.Status != Modified {
		return nil
	}
	fi, err := a.root.Lstat(ch.Path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	uid, gid, ok := fileOwner(fi)
	if !ok {
		return nil
	}
	if os.Geteuid() == 0 {
		return dst.Chown(int(uid), int(gid))
	}
	if err := dst.Chown(-1, int(gid)); err != nil && !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return nil
}

func (a *applier) chmodDir(ch Change) error {
	d, err := a.root.Open(ch.Path)
	if err != nil {
		return err
	}
	return errors.Join(d.Chmod(fs.FileMode(applied(ch.Mode))), d.Close())
}

// applied is the permission a change gets on the host: without setuid and
// setgid, which a sandboxed command must not be able to plant.
func applied(p Perm) Perm { return p &^ Perm(fs.ModeSetuid|fs.ModeSetgid) }

// settle starts the changeset afresh over the new originals: every path it
// touched, applied now or by an earlier, interrupted apply, gets a new
// fingerprint, and the upper directory is emptied.
func (r Root) settle(root *deepRoot, base baseline, applied []Change) error {
	touched, err := r.upperPaths()
	if err != nil {
		return err
	}
	for _, ch := range applied {
		touched = append(touched, ch.Path)
	}
	for _, p := range touched {
		refingerprint(root, base, p)
	}
	if err := r.saveBaseline(base); err != nil {
		return err
	}
	entries, err := os.ReadDir(r.Upper)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := removeTree(filepath.Join(r.Upper, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// upperPaths lists every path in the upper directory.
func (r Root) upperPaths() ([]string, error) {
	var paths []string
	err := walkTree(r.Upper, func(rel string, _ fs.FileInfo) (bool, error) {
		paths = append(paths, rel)
		return true, nil
	})
	return paths, err
}

func refingerprint(root *deepRoot, base baseline, p string) {
	old, known := base[p]
	fi, err := root.Lstat(p)
	if err != nil {
		delete(base, p)
	} else {
		base[p] = fingerprintOf(fi)
	}
	// What was beneath a directory that is gone went with it.
	if known && old.Type == Dir && (err != nil || !fi.IsDir()) {
		deleteBeneath(base, p)
	}
}

func deleteBeneath(base baseline, p string) {
	prefix := p + "/"
	for k := range base {
		if strings.HasPrefix(k, prefix) {
			delete(base, k)
		}
	}
}
