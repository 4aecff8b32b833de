package changeset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The names inside a changeset directory.
const (
	metaName      = "changeset.json"
	baselineName  = "baseline.json"
	upperName     = "upper"
	workName      = "work"
	formatVersion = 1
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
	dir  string
	meta meta
}

// meta is the content of changeset.json.
type meta struct {
	Version int       `json:"version"`
	Lower   string    `json:"lower"`
	Created time.Time `json:"created"`
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
	if c.meta.Version != formatVersion {
		return fmt.Errorf("%s: format version %d, want %d", metaName, c.meta.Version, formatVersion)
	}
	if !filepath.IsAbs(c.meta.Lower) {
		return fmt.Errorf("%s: lower directory %q is not absolute", metaName, c.meta.Lower)
	}
	for _, d := range []string{c.UpperDir(), c.WorkDir()} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s missing or not a directory", d)
		}
	}
	return nil
}

// Create starts an empty changeset in dir over the directory lower. dir is
// created when missing and must be empty otherwise; neither directory may
// contain the other. Create records the baseline of lower (see the package
// documentation) and checks that dir's filesystem has what overlayfs needs.
func Create(dir, lower string) (*Changeset, error) {
	c, err := prepare(dir, lower)
	if err != nil {
		return nil, &fs.PathError{Op: "create changeset", Path: dir, Err: err}
	}
	if err := c.populate(); err != nil {
		c.removeParts()
		return nil, &fs.PathError{Op: "create changeset", Path: dir, Err: err}
	}
	return c, nil
}

// prepare validates the two directories and returns their canonical paths.
func prepare(dir, lower string) (*Changeset, error) {
	lowerReal, err := canonicalDir(lower)
	if err != nil {
		return nil, fmt.Errorf("directory %s: %w", lower, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := checkApart(abs, lowerReal); err != nil {
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
	if err := checkApart(real, lowerReal); err != nil {
		return nil, err
	}
	return &Changeset{dir: real, meta: meta{Version: formatVersion, Lower: lowerReal, Created: time.Now().UTC()}}, nil
}

// checkApart refuses a changeset directory inside the directory it records
// or around it: overlayfs refuses overlapping layers, and the sandboxed
// command could write to its own changeset.
func checkApart(dir, lower string) error {
	if within(dir, lower) || within(lower, dir) {
		return fmt.Errorf("overlaps %s: a changeset must lie outside the directory it records", lower)
	}
	return nil
}

// populate makes the layout. changeset.json comes last: its presence marks a
// complete changeset.
func (c *Changeset) populate() error {
	lfi, err := os.Stat(c.meta.Lower)
	if err != nil {
		return err
	}
	// The root of the merged tree takes its attributes from the upper
	// directory: give it the original's.
	if err := os.Mkdir(c.UpperDir(), 0o700); err != nil {
		return err
	}
	if err := os.Chmod(c.UpperDir(), lfi.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Mkdir(c.WorkDir(), 0o700); err != nil {
		return err
	}
	if err := checkUserXattr(c.UpperDir()); err != nil {
		return err
	}
	base, err := recordBaseline(c.meta.Lower)
	if err != nil {
		return err
	}
	if err := c.saveBaseline(base); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c.meta, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(c.dir, metaName), append(b, '\n'))
}

// Dir is the changeset directory.
func (c *Changeset) Dir() string { return c.dir }

// Lower is the real directory the changeset records changes to.
func (c *Changeset) Lower() string { return c.meta.Lower }

// Created is when the changeset began.
func (c *Changeset) Created() time.Time { return c.meta.Created }

// UpperDir is the overlayfs upper directory.
func (c *Changeset) UpperDir() string { upper, _ := Dirs(c.dir); return upper }

// WorkDir is the overlayfs work directory.
func (c *Changeset) WorkDir() string { _, work := Dirs(c.dir); return work }

// Dirs returns the overlayfs upper and work directories of the changeset in
// dir, whether or not it exists yet.
func Dirs(dir string) (upper, work string) {
	return filepath.Join(dir, upperName), filepath.Join(dir, workName)
}

// Lock marks the changeset as mounted by one sandbox until unlock is called.
// It fails at once with ErrInUse while another holder has it: overlayfs does
// not support two mounts sharing an upper directory, and Apply and Discard
// must not change the upper directory under a live mount. The lock is an
// flock(2) on the changeset directory and dies with the process.
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

// Discard deletes the changeset: its changes, baseline and metadata. The
// directory itself goes too unless something else was put in it.
func (c *Changeset) Discard() error {
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
	var errs []error
	for _, name := range []string{metaName, baselineName, upperName, workName} {
		if err := removeTree(filepath.Join(c.dir, name)); err != nil {
			errs = append(errs, err)
		}
	}
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

// within reports whether p is base or lies beneath it.
func within(p, base string) bool {
	return p == base || base == "/" || strings.HasPrefix(p, base+"/")
}
