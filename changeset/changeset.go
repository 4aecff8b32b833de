package changeset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corralhq/corral/internal/pathtree"
)

// The names inside a changeset directory.
const (
	metaName      = "changeset.json"
	baselineName  = "baseline.json"
	upperName     = "upper"
	workName      = "work"
	rootsName     = "roots"
	formatVersion = 2
)

var (
	// ErrNotChangeset is wrapped by Open's error when the directory holds no
	// changeset.
	ErrNotChangeset = errors.New("not a changeset (no " + metaName + ")")
	// ErrInUse is wrapped by the error of Lock, Apply and Discard while a
	// sandbox has the changeset mounted.
	ErrInUse = errors.New("in use by a running sandbox")
)

// Changeset is an open changeset directory.
type Changeset struct {
	dir   string
	meta  meta
	roots []Root
}

// Root is one real directory a changeset records changes to, with the
// overlayfs directories that hold them.
type Root struct {
	// Path is the real directory: absolute, free of symlinks.
	Path string
	// Upper and Work are the overlayfs upper and work directories of the
	// mount over Path.
	Upper, Work string
	// dir holds Upper, Work and the baseline.
	dir string
}

// meta is the content of changeset.json.
type meta struct {
	Version int       `json:"version"`
	Created time.Time `json:"created"`
	Roots   []rootRef `json:"roots,omitempty"`
	// Lower is version 1's only directory, kept in the changeset directory
	// itself; version 2 has Roots instead.
	Lower string `json:"lower,omitempty"`
}

// rootRef is a root as changeset.json records it.
type rootRef struct {
	Path string `json:"path"`
	// Dir holds the root's upper, work and baseline, relative to the
	// changeset directory.
	Dir string `json:"dir"`
}

// Open opens the changeset in dir.
func Open(dir string) (*Changeset, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "open changeset", Path: dir, Err: err}
	}
	c := &Changeset{dir: abs}
	if err := c.readMeta(); err != nil {
		return nil, &fs.PathError{Op: "open changeset", Path: dir, Err: err}
	}
	return c, nil
}

func (c *Changeset) readMeta() error {
	b, err := os.ReadFile(filepath.Join(c.dir, metaName))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(c.dir); serr != nil {
			return serr
		}
		return ErrNotChangeset
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &c.meta); err != nil {
		return fmt.Errorf("%s: %w", metaName, err)
	}
	if err := c.meta.upgrade(); err != nil {
		return fmt.Errorf("%s: %w", metaName, err)
	}
	if err := c.meta.check(); err != nil {
		return fmt.Errorf("%s: %w", metaName, err)
	}
	c.setRoots()
	for _, r := range c.roots {
		for _, d := range []string{r.Upper, r.Work} {
			if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
				return fmt.Errorf("%s missing or not a directory", d)
			}
		}
	}
	return nil
}

// upgrade reads a version 1 changeset, which has one directory and keeps
// its parts in the changeset directory itself, as a one-root changeset of
// the current version. Nothing is rewritten: the old layout stays valid.
func (m *meta) upgrade() error {
	switch m.Version {
	case 1:
		m.Roots = []rootRef{{Path: m.Lower, Dir: "."}}
		m.Version, m.Lower = formatVersion, ""
	case formatVersion:
	default:
		return fmt.Errorf("format version %d, want %d or 1", m.Version, formatVersion)
	}
	return nil
}

func (m *meta) check() error {
	if len(m.Roots) == 0 {
		return errors.New("no directories")
	}
	paths := make([]string, len(m.Roots))
	for i, r := range m.Roots {
		if !filepath.IsAbs(r.Path) {
			return fmt.Errorf("directory %q is not absolute", r.Path)
		}
		if d := filepath.Clean(r.Dir); filepath.IsAbs(d) || d == ".." || strings.HasPrefix(d, "../") {
			return fmt.Errorf("the parts of %s lie outside the changeset (%q)", r.Path, r.Dir)
		}
		paths[i] = r.Path
	}
	return checkDisjoint(paths)
}

func (c *Changeset) setRoots() {
	c.roots = make([]Root, len(c.meta.Roots))
	for i, r := range c.meta.Roots {
		d := filepath.Join(c.dir, r.Dir)
		c.roots[i] = Root{Path: r.Path, Upper: filepath.Join(d, upperName), Work: filepath.Join(d, workName), dir: d}
	}
}

// Create starts an empty changeset in dir over the directories roots: the
// workspace first, then any other writable directories whose writes it
// keeps too. dir is created when missing and must be empty otherwise; no
// two of the directories may contain one another. Create records the
// baseline of each directory (see the package documentation) and checks
// that dir's filesystem has what overlayfs needs.
func Create(dir string, roots ...string) (*Changeset, error) {
	defer longPaths()()
	c, err := prepare(dir, roots)
	if err != nil {
		return nil, &fs.PathError{Op: "create changeset", Path: dir, Err: err}
	}
	if err := c.populate(); err != nil {
		c.removeParts()
		return nil, &fs.PathError{Op: "create changeset", Path: dir, Err: err}
	}
	return c, nil
}

// prepare validates the directories and returns a changeset of their
// canonical paths, not yet populated.
func prepare(dir string, roots []string) (*Changeset, error) {
	if len(roots) == 0 {
		return nil, errors.New("no directory to record changes to")
	}
	paths, err := canonicalRoots(roots)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := checkApart(abs, paths); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, err
	}
	real, err := canonicalDir(abs)
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(real); err != nil || len(entries) > 0 {
		return nil, errors.Join(errors.New("not empty and not a changeset"), err)
	}
	if err := checkApart(real, paths); err != nil {
		return nil, err
	}
	c := &Changeset{dir: real, meta: meta{Version: formatVersion, Created: time.Now().UTC()}}
	for i, p := range paths {
		c.meta.Roots = append(c.meta.Roots, rootRef{Path: p, Dir: rootDir(i)})
	}
	c.setRoots()
	return c, nil
}

func canonicalRoots(roots []string) ([]string, error) {
	paths := make([]string, len(roots))
	for i, r := range roots {
		p, err := canonicalDir(r)
		if err != nil {
			return nil, fmt.Errorf("directory %s: %w", r, err)
		}
		paths[i] = p
	}
	return paths, checkDisjoint(paths)
}

// checkDisjoint refuses a directory named twice or inside another: its
// changes would belong to two overlays.
func checkDisjoint(paths []string) error {
	for i, p := range paths {
		for _, q := range paths[i+1:] {
			switch {
			case p == q:
				return fmt.Errorf("directory %s named twice", p)
			case pathtree.Within(p, q), pathtree.Within(q, p):
				return fmt.Errorf("directories %s and %s overlap: one changeset cannot overlay both", p, q)
			}
		}
	}
	return nil
}

// rootDir is where a new changeset keeps the parts of its root i.
func rootDir(i int) string { return filepath.Join(rootsName, strconv.Itoa(i)) }

// checkApart refuses a changeset directory inside a directory it records
// or around one: overlayfs refuses overlapping layers, and the sandboxed
// command could write to its own changeset.
func checkApart(dir string, roots []string) error {
	for _, r := range roots {
		if pathtree.Within(dir, r) || pathtree.Within(r, dir) {
			return fmt.Errorf("overlaps %s: a changeset must lie outside the directories it records", r)
		}
	}
	return nil
}

// populate makes the layout. changeset.json comes last: its presence marks a
// complete changeset.
func (c *Changeset) populate() error {
	for i, r := range c.roots {
		if err := makeRootParts(r, i == 0); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(c.meta, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(c.dir, metaName), append(b, '\n'))
}

// makeRootParts makes r's upper and work directories and records its
// baseline. probe checks the filesystem's extended attributes: every root
// lies on the changeset's filesystem, so one check does.
func makeRootParts(r Root, probe bool) error {
	lfi, err := os.Stat(r.Path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return err
	}
	// The root of the merged tree takes its attributes from the upper
	// directory: give it the original's.
	if err := os.Mkdir(r.Upper, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(r.Upper, lfi.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Mkdir(r.Work, 0o700); err != nil {
		return err
	}
	if probe {
		if err := checkUserXattr(r.Upper); err != nil {
			return err
		}
	}
	base, err := recordBaseline(r.Path)
	if err != nil {
		return err
	}
	return r.saveBaseline(base)
}

// Planned returns the roots Create(dir, roots...) would make, without
// touching the filesystem: roots must already be canonical. It lets a
// caller show where a changeset not made yet will keep its changes.
func Planned(dir string, roots ...string) []Root {
	c := &Changeset{dir: dir}
	for i, p := range roots {
		c.meta.Roots = append(c.meta.Roots, rootRef{Path: p, Dir: rootDir(i)})
	}
	c.setRoots()
	return c.roots
}

// Dir is the changeset directory.
func (c *Changeset) Dir() string { return c.dir }

// Roots are the real directories the changeset records changes to, the
// workspace first, each with its overlayfs directories.
func (c *Changeset) Roots() []Root { return append([]Root(nil), c.roots...) }

// RootPaths are the paths of Roots.
func (c *Changeset) RootPaths() []string {
	paths := make([]string, len(c.roots))
	for i, r := range c.roots {
		paths[i] = r.Path
	}
	return paths
}

// Created is when the changeset began.
func (c *Changeset) Created() time.Time { return c.meta.Created }

// root returns the root at path p.
func (c *Changeset) root(p string) (Root, bool) {
	for _, r := range c.roots {
		if r.Path == p {
			return r, true
		}
	}
	return Root{}, false
}

// Lock marks the changeset as mounted by one sandbox until unlock is called.
// It fails at once with ErrInUse while another holder has it: overlayfs does
// not support two mounts sharing an upper directory, and Apply and Discard
// must not change the upper directories under a live mount. The lock is an
// flock(2) on the changeset directory, covers every root, and dies with the
// process.
func (c *Changeset) Lock() (unlock func(), err error) {
	f, err := os.Open(c.dir)
	if err != nil {
		return nil, &fs.PathError{Op: "lock changeset", Path: c.dir, Err: err}
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "lock changeset", Path: c.dir, Err: err}
	}
	return func() { f.Close() }, nil
}

// Discard deletes the changeset: the changes, baseline and metadata of
// every root. The directory itself goes too unless something else was put
// in it.
func (c *Changeset) Discard() error {
	defer longPaths()()
	unlock, err := c.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := c.removeParts(); err != nil {
		return &fs.PathError{Op: "discard changeset", Path: c.dir, Err: err}
	}
	os.Remove(c.dir) // fails harmlessly when not empty
	return nil
}

// removeParts removes what Create made, metadata first so that a half-removed
// changeset is no longer taken for one.
func (c *Changeset) removeParts() error {
	errs := []error{removeTree(filepath.Join(c.dir, metaName))}
	for _, r := range c.roots {
		for _, p := range []string{filepath.Join(r.dir, baselineName), r.Upper, r.Work} {
			errs = append(errs, removeTree(p))
		}
		if r.dir != c.dir {
			errs = append(errs, removeTree(r.dir))
		}
	}
	os.Remove(filepath.Join(c.dir, rootsName)) // fails harmlessly when absent or not empty
	return errors.Join(errs...)
}

func canonicalDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", errors.New("not a directory")
	}
	return real, nil
}
