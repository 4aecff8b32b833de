package changeset

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
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

// Export writes the changes to w as a tar archive (see "Export" in the
// package documentation). Entries carry their permissions and modification
// times; owners are left out.
func (c *Changeset) Export(w io.Writer) error {
	changes, err := c.List()
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	// covered are paths whose original entries beneath are gone with them:
	// deleted ones, those replaced by a non-directory and opaque
	// directories.
	covered := map[string]bool{}
	for _, ch := range changes {
		if ch.Status == Deleted || ch.Type != Dir || ch.Status == Replaced && ch.OldType == Dir {
			covered[ch.Path] = true
		}
		if ch.Status == Deleted && covered[path.Dir(ch.Path)] {
			continue
		}
		if err := c.exportOne(tw, ch); err != nil {
			return &fs.PathError{Op: "export changeset", Path: ch.Path, Err: err}
		}
	}
	return tw.Close()
}

func (c *Changeset) exportOne(tw *tar.Writer, ch Change) error {
	if ch.Status == Deleted {
		dir, name := path.Split(ch.Path)
		return tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg, Name: dir + whiteoutPrefix + name, Mode: 0o600, ModTime: c.meta.Created,
		})
	}
	if !slices.Contains([]Type{File, Dir, Symlink}, ch.Type) {
		return nil // sockets, fifos and devices are not exported
	}
	p := filepath.Join(c.UpperDir(), filepath.FromSlash(ch.Path))
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	h, err := tar.FileInfoHeader(fi, ch.Target)
	if err != nil {
		return err
	}
	h.Name, h.Mode = ch.Path, int64(ch.Mode.Unix())
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
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// Import creates a changeset in dir over the directory lower from an archive
// written by Export, so that changes made elsewhere can be listed, diffed
// and applied here with the usual conflict checks.
func Import(dir, lower string, r io.Reader) (*Changeset, error) {
	c, err := Create(dir, lower)
	if err != nil {
		return nil, err
	}
	if err := c.unpack(r); err != nil {
		c.Discard()
		return nil, &fs.PathError{Op: "import changeset", Path: dir, Err: err}
	}
	return c, nil
}

func (c *Changeset) unpack(r io.Reader) error {
	root, err := os.OpenRoot(c.UpperDir())
	if err != nil {
		return err
	}
	defer root.Close()
	u := &unpacker{root: root, dirModes: map[string]fs.FileMode{}}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return u.chmodDirs()
		}
		if err != nil {
			return err
		}
		if err := u.entry(h, tr); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}

// unpacker turns archive entries into an upper directory.
type unpacker struct {
	root *os.Root
	// dirModes are set last, deepest first, so that a read-only directory
	// can first receive its entries.
	dirModes map[string]fs.FileMode
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

func (u *unpacker) entry(h *tar.Header, r io.Reader) error {
	name, err := entryName(h.Name)
	if err != nil || name == "." {
		return err
	}
	if err := makeParents(u.root, name); err != nil {
		return err
	}
	dir, base := path.Split(name)
	if target, ok := strings.CutPrefix(base, whiteoutPrefix); ok {
		if base == opaqueWhiteout {
			return setOpaque(u.hostPath(dir))
		}
		return u.whiteout(dir + target)
	}
	if err := clearPath(u.root, name, h.Typeflag == tar.TypeDir); err != nil {
		return err
	}
	return u.put(name, h, r)
}

func (u *unpacker) put(name string, h *tar.Header, r io.Reader) error {
	mode := fs.FileMode(permFromUnix(uint32(h.Mode & 0o7777)))
	switch h.Typeflag {
	case tar.TypeDir:
		u.dirModes[name] = mode
		if err := u.root.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
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
	return fmt.Errorf("unsupported entry type %q", h.Typeflag)
}

func (u *unpacker) whiteout(name string) error {
	if err := clearPath(u.root, name, false); err != nil {
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
func makeParents(root *os.Root, name string) error {
	dir := "."
	for _, part := range strings.Split(path.Dir(name), "/") {
		if part == "." {
			break
		}
		dir = path.Join(dir, part)
		fi, err := root.Lstat(dir)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s is not a directory", dir)
		case err != nil && isAbsent(err):
			if err := root.Mkdir(dir, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		}
	}
	return nil
}

// clearPath removes what an earlier entry left at name, keeping a directory
// when a directory comes again.
func clearPath(root *os.Root, name string, keepDir bool) error {
	fi, err := root.Lstat(name)
	if err != nil {
		if isAbsent(err) {
			return nil
		}
		return err
	}
	if keepDir && fi.IsDir() {
		return nil
	}
	return root.RemoveAll(name)
}
