package changeset

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/corralhq/corral/internal/pathtree"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// In an exported archive, as in the layers of OCI images, .wh.NAME marks
// the deleted path NAME, and a directory holding .wh..wh..opq hides all of
// the original's entries.
const (
	whiteoutPrefix = ".wh."
	opaqueWhiteout = ".wh..wh..opq"
)

// rootsRecord is the PAX record of the archive's global header that lists
// the roots, as a JSON array of their paths where the archive was made. tar
// programs that do not know it skip it.
const rootsRecord = "CORRAL.roots"

// Export writes the changes to w as a tar archive (see "Export" in the
// package documentation). Entries carry their permissions and modification
// times; owners are left out.
func (c *Changeset) Export(w io.Writer) error {
	defer longPaths()()
	changes, err := c.List()
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	if err := c.writeRoots(tw); err != nil {
		return &fs.PathError{Op: "export changeset", Path: c.dir, Err: err}
	}
	// covered are paths whose original entries beneath are gone with them:
	// deleted ones, those replaced by a non-directory and opaque
	// directories.
	covered := map[string]bool{}
	for _, ch := range changes {
		p := ch.RealPath()
		if ch.Status == Deleted || ch.Type != Dir || ch.Status == Replaced && ch.OldType == Dir {
			covered[p] = true
		}
		if ch.Status == Deleted && covered[filepath.Dir(p)] {
			continue
		}
		if err := c.exportOne(tw, ch); err != nil {
			return &fs.PathError{Op: "export changeset", Path: p, Err: err}
		}
	}
	return tw.Close()
}

// writeRoots writes the global header that names the roots.
func (c *Changeset) writeRoots(tw *tar.Writer) error {
	b, err := json.Marshal(c.RootPaths())
	if err != nil {
		return err
	}
	return tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
		PAXRecords: map[string]string{rootsRecord: string(b)},
	})
}

func (c *Changeset) exportOne(tw *tar.Writer, ch Change) error {
	name := c.entryName(ch)
	if ch.Status == Deleted {
		dir, base := path.Split(name)
		return tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg, Name: dir + whiteoutPrefix + base, Mode: 0o600, ModTime: c.meta.Created,
		})
	}
	if !slices.Contains([]Type{File, Dir, Symlink}, ch.Type) {
		return nil // sockets, fifos and devices are not exported
	}
	r, _ := c.root(ch.Root)
	p := filepath.Join(r.Upper, filepath.FromSlash(ch.Path))
	fi, err := lstat(p)
	if err != nil {
		return err
	}
	h, err := tar.FileInfoHeader(fi, ch.Target)
	if err != nil {
		return err
	}
	h.Name, h.Mode = name, int64(ch.Mode.Unix())
	if ch.Type == Dir {
		h.Name += "/"
	}
	h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	switch {
	case ch.Type == File:
		return copyInto(tw, p)
	case ch.Status == Replaced && ch.OldType == Dir:
		return tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg, Name: h.Name + opaqueWhiteout, Mode: 0o600, ModTime: c.meta.Created,
		})
	}
	return nil
}

func copyInto(w io.Writer, p string) error {
	f, err := openFile(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// ImportOptions say which directories here an archive's changes are for.
type ImportOptions struct {
	// Roots maps a root of the archive other than the first, by its path
	// where the archive was made, to the directory it stands for here.
	// Every such root must be mapped: the archive's own list of roots is
	// not trusted, since it could name any directory (~/.ssh, say) for
	// Apply to write. Map a root to its own path to accept it as it is.
	Roots map[string]string
}

// UnmappedRootError is Import's refusal of an archive that records changes
// to a directory besides the workspace that ImportOptions.Roots does not
// map: nothing was imported.
type UnmappedRootError struct {
	// Root is the directory as the archive names it.
	Root string
}

func (e *UnmappedRootError) Error() string {
	return fmt.Sprintf("the archive records changes to %s besides the workspace: map it to a directory here to accept them", Quote(e.Root))
}

// Import creates a changeset in dir from an archive written by Export, so
// that changes made elsewhere can be listed, diffed and applied here with
// the usual conflict checks. The archive's first root (the workspace where
// it was made) stands for lower; each of the others must be mapped by
// opts.Roots, or Import fails with an *UnmappedRootError. An archive
// without the list of roots, as Export wrote before changesets had several,
// holds one root.
//
// The archive is not trusted. Import refuses, leaving nothing behind, an
// entry whose name leaves its root (.., an absolute name) or passes through
// a symlink or file an earlier entry made; hard links, devices, fifos and
// sparse files, which Export never writes; and an entry whose data is
// shorter than its header says. Setuid and setgid bits are dropped. Files
// are written only inside the new changeset's upper directories, each
// through an [os.Root]; Apply later writes them with its usual checks.
func Import(dir, lower string, r io.Reader, opts ImportOptions) (*Changeset, error) {
	defer longPaths()()
	a, err := readArchive(r)
	if err != nil {
		return nil, &fs.PathError{Op: "import changeset", Path: dir, Err: err}
	}
	here, err := a.place(lower, opts)
	if err != nil {
		return nil, &fs.PathError{Op: "import changeset", Path: dir, Err: err}
	}
	c, err := Create(dir, here...)
	if err != nil {
		return nil, err
	}
	if err := c.unpack(a); err != nil {
		c.Discard()
		return nil, &fs.PathError{Op: "import changeset", Path: dir, Err: err}
	}
	return c, nil
}

// archive is an archive written by Export, being read.
type archive struct {
	tr *tar.Reader
	// paths are the roots where the archive was made, as its global
	// header lists them; nil when it has none.
	paths []string
	// pending is an entry read while looking for the header.
	pending *tar.Header
}

// readArchive reads the archive's list of roots, which Export writes first.
func readArchive(r io.Reader) (*archive, error) {
	a := &archive{tr: tar.NewReader(r)}
	h, err := a.tr.Next()
	switch {
	case errors.Is(err, io.EOF):
		return a, nil
	case err != nil:
		return nil, err
	case h.Typeflag != tar.TypeXGlobalHeader:
		a.pending = h
		return a, nil
	}
	rec, ok := h.PAXRecords[rootsRecord]
	if !ok {
		return a, nil // another program's header
	}
	if err := json.Unmarshal([]byte(rec), &a.paths); err != nil {
		return nil, fmt.Errorf("the archive's list of directories: %w", err)
	}
	if err := checkArchiveRoots(a.paths); err != nil {
		return nil, fmt.Errorf("the archive's list of directories: %w", err)
	}
	return a, nil
}

func checkArchiveRoots(paths []string) error {
	if len(paths) == 0 {
		return errors.New("empty")
	}
	for _, p := range paths {
		if !path.IsAbs(p) || path.Clean(p) != p || p == "/" {
			return fmt.Errorf("%q is not a clean absolute path below /", p)
		}
	}
	return checkDisjoint(paths)
}

// place returns the directories here that the archive's roots stand for.
func (a *archive) place(lower string, opts ImportOptions) ([]string, error) {
	if len(a.paths) == 0 {
		if len(opts.Roots) > 0 {
			return nil, errors.New("the archive holds one directory: there are no others to map")
		}
		return []string{lower}, nil
	}
	for from := range opts.Roots {
		if !slices.Contains(a.paths[1:], from) {
			return nil, fmt.Errorf("no directory %s to map: the archive's directories besides the first are %s",
				Quote(from), quoteAll(a.paths[1:]))
		}
	}
	here := []string{lower}
	for _, p := range a.paths[1:] {
		to, ok := opts.Roots[p]
		if !ok {
			return nil, &UnmappedRootError{Root: p}
		}
		here = append(here, to)
	}
	return here, nil
}

// next returns the next entry; io.EOF at the end.
func (a *archive) next() (*tar.Header, error) {
	if h := a.pending; h != nil {
		a.pending = nil
		return h, nil
	}
	return a.tr.Next()
}

// rootOf returns the index of the root an entry name belongs to and the
// name relative to it. With one root, names are relative to it already;
// with several, they are absolute without the leading slash.
func (a *archive) rootOf(name string) (int, string, error) {
	if len(a.paths) <= 1 {
		return 0, name, nil
	}
	for i, p := range a.paths {
		prefix := strings.TrimPrefix(p, "/")
		if name == prefix {
			return i, ".", nil
		}
		if rest, ok := strings.CutPrefix(name, prefix+"/"); ok {
			return i, rest, nil
		}
	}
	return 0, "", errors.New("lies outside the archive's directories")
}

func (c *Changeset) unpack(a *archive) error {
	unpackers := make([]*unpacker, len(c.roots))
	for i, r := range c.roots {
		root, err := openDeepRoot(r.Upper)
		if err != nil {
			return err
		}
		defer root.Close()
		unpackers[i] = &unpacker{root: root, dirModes: map[string]fs.FileMode{}, dirs: map[string]bool{".": true}}
	}
	for {
		h, err := a.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := a.unpackEntry(unpackers, h); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
	for _, u := range unpackers {
		if err := u.chmodDirs(); err != nil {
			return err
		}
	}
	return nil
}

func (a *archive) unpackEntry(unpackers []*unpacker, h *tar.Header) error {
	name, err := entryName(h.Name)
	if err != nil {
		return err
	}
	i, rel, err := a.rootOf(name)
	if err != nil {
		return err
	}
	return unpackers[i].entry(rel, h, a.tr)
}

// unpacker turns archive entries into an upper directory.
type unpacker struct {
	root *deepRoot
	// dirModes are set last, deepest first, so that a read-only directory
	// can first receive its entries.
	dirModes map[string]fs.FileMode
	// dirs are the paths known to be directories in the upper directory,
	// so that each entry checks only the parents not seen before.
	dirs map[string]bool
}

func (u *unpacker) chmodDirs() error {
	dirs := slices.Sorted(maps.Keys(u.dirModes))
	for _, d := range slices.Backward(dirs) {
		if err := u.root.Chmod(d, u.dirModes[d]); err != nil {
			return err
		}
	}
	return nil
}

// entry puts the archive entry h, named name relative to the root, into
// the upper directory.
func (u *unpacker) entry(name string, h *tar.Header, r io.Reader) error {
	if name == "." {
		return nil
	}
	if err := u.makeParents(name); err != nil {
		return err
	}
	if isSparse(h) {
		return errors.New("unsupported entry type: sparse file")
	}
	dir, base := path.Split(name)
	if target, ok := strings.CutPrefix(base, whiteoutPrefix); ok {
		if base == opaqueWhiteout {
			return setOpaque(u.hostPath(dir))
		}
		if target == "" || target == "." || target == ".." {
			return errors.New("a whiteout names no entry")
		}
		return u.whiteout(dir + target)
	}
	if err := u.clearPath(name, h.Typeflag == tar.TypeDir); err != nil {
		return err
	}
	return u.put(name, h, r)
}

func (u *unpacker) put(name string, h *tar.Header, r io.Reader) error {
	// Setuid and setgid are dropped: a file in the upper directory would
	// otherwise be a privileged executable of whoever imports.
	mode := fs.FileMode(permFromUnix(uint32(h.Mode & 0o1777)))
	switch h.Typeflag {
	case tar.TypeDir:
		u.dirModes[name] = mode
		if err := u.root.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		u.dirs[name] = true
		return nil
	case tar.TypeSymlink:
		return u.root.Symlink(h.Linkname, name)
	case tar.TypeReg:
		f, err := u.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, r)
		if err = errors.Join(err, f.Chmod(mode), f.Close()); err != nil {
			return err
		}
		return u.root.Chtimes(name, time.Time{}, h.ModTime)
	}
	return fmt.Errorf("unsupported entry type: %s", entryType(h.Typeflag))
}

// entryType names a tar entry type for an error.
func entryType(t byte) string {
	switch t {
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "fifo"
	case tar.TypeGNUSparse:
		return "sparse file"
	}
	return strconv.Quote(string(t))
}

// isSparse reports whether h is a sparse file of the PAX format, which the
// tar reader expands with zeros: a small archive could fill the disk.
func isSparse(h *tar.Header) bool {
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

func quoteAll(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = Quote(p)
	}
	return strings.Join(q, ", ")
}

func (u *unpacker) whiteout(name string) error {
	if err := u.clearPath(name, false); err != nil {
		return err
	}
	return makeWhiteout(u.hostPath(name))
}

// hostPath is name inside the upper directory, for the calls os.Root lacks.
// makeParents has checked that no symlink lies on the way.
func (u *unpacker) hostPath(name string) string {
	return filepath.Join(u.root.Name(), filepath.FromSlash(name))
}

// entryName cleans an archive name and refuses one that leaves the tree.
func entryName(n string) (string, error) {
	n = strings.TrimPrefix(n, "./")
	clean := path.Clean(n)
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", errors.New("entry name leaves the directory")
	}
	return clean, nil
}

// makeParents creates the directories above name, refusing to pass through
// anything but a directory, so that an entry cannot be placed through a
// symlink an earlier entry made.
func (u *unpacker) makeParents(name string) error {
	if u.dirs[path.Dir(name)] {
		return nil
	}
	dir := "."
	for _, part := range strings.Split(path.Dir(name), "/") {
		if part == "." {
			break
		}
		dir = path.Join(dir, part)
		if u.dirs[dir] {
			continue
		}
		fi, err := u.root.Lstat(dir)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s is not a directory", Quote(dir))
		case err != nil && isAbsent(err):
			if err := u.root.Mkdir(dir, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		u.dirs[dir] = true
	}
	return nil
}

// clearPath removes what an earlier entry left at name, keeping a directory
// when a directory comes again.
func (u *unpacker) clearPath(name string, keepDir bool) error {
	fi, err := u.root.Lstat(name)
	if err != nil {
		if isAbsent(err) {
			return nil
		}
		return err
	}
	if keepDir && fi.IsDir() {
		u.dirs[name] = true
		return nil
	}
	if fi.IsDir() {
		for d := range u.dirs {
			if pathtree.Within(d, name) {
				delete(u.dirs, d)
			}
		}
	}
	return u.root.RemoveAll(name)
}
