package changeset

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
)

// Status says what a change does to a path.
type Status string

const (
	// Added: the path did not exist.
	Added Status = "added"
	// Modified: same type, different content, target or permissions.
	Modified Status = "modified"
	// Deleted: the path no longer exists.
	Deleted Status = "deleted"
	// Replaced: the path was removed and something else put there: an
	// entry of another type, or a directory whose old entries are all gone
	// (overlayfs's opaque directory). Old entries not put back are listed
	// as Deleted.
	Replaced Status = "replaced"
)

// Type is the kind of a file.
type Type string

const (
	File    Type = "file"
	Dir     Type = "dir"
	Symlink Type = "symlink"
	Fifo    Type = "fifo"
	Socket  Type = "socket"
	Device  Type = "device"
)

// Change is one changed path. Fields about the entry after the change are
// empty for a deletion; fields about the original are empty for an addition.
type Change struct {
	// Root is the real directory the change belongs to: one of the
	// changeset's roots.
	Root string `json:"root"`
	// Path is relative to Root, with slashes.
	Path    string `json:"path"`
	Status  Status `json:"status"`
	Type    Type   `json:"type,omitempty"`
	OldType Type   `json:"old_type,omitempty"`
	Size    int64  `json:"size"`
	OldSize int64  `json:"old_size"`
	Mode    Perm   `json:"mode,omitempty"`
	OldMode Perm   `json:"old_mode,omitempty"`
	// Target is a new symlink's target.
	Target string `json:"target,omitempty"`
	// Binary and Unprintable describe a new or changed file's content (see
	// [Content]).
	Binary      bool `json:"binary,omitempty"`
	Unprintable bool `json:"unprintable,omitempty"`
}

// Executable reports whether the change leaves an executable file that was
// not one before: a new file with an execute bit, or an existing file that
// gained one.
func (c Change) Executable() bool {
	const x = 0o111
	if c.Status == Deleted || c.Type != File || c.Mode.Unix()&x == 0 {
		return false
	}
	return c.OldType != File || c.OldMode.Unix()&x == 0
}

// RealPath is the path the change applies to: Path inside Root.
func (c Change) RealPath() string { return filepath.Join(c.Root, filepath.FromSlash(c.Path)) }

// String is the status letter and Path, relative to Root, with a slash
// after a directory; Path is quoted when it holds characters unsafe to print
// (see [Quote]).
func (c Change) String() string {
	p := c.Path
	if c.Type == Dir || c.Status == Deleted && c.OldType == Dir {
		p += "/"
	}
	return fmt.Sprintf("%c %s", c.Status.Letter(), Quote(p))
}

// Letter is the status's one-letter code: A, M, D or R.
func (s Status) Letter() byte {
	switch s {
	case Added:
		return 'A'
	case Modified:
		return 'M'
	case Deleted:
		return 'D'
	}
	return 'R'
}

// Perm is a file's permission bits with setuid, setgid and sticky, written
// in JSON as the octal string of chmod(1), such as "0755".
type Perm fs.FileMode

const permMask = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

func perm(fi fs.FileInfo) Perm { return Perm(fi.Mode() & permMask) }

// Unix returns p as the bits of chmod(2).
func (p Perm) Unix() uint32 {
	m := fs.FileMode(p)
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

func permFromUnix(u uint32) Perm {
	m := fs.FileMode(u & 0o777)
	if u&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if u&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if u&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return Perm(m)
}

func (p Perm) String() string { return fmt.Sprintf("%04o", p.Unix()) }

func (p Perm) MarshalJSON() ([]byte, error) { return json.Marshal(p.String()) }

func (p *Perm) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	u, err := strconv.ParseUint(s, 8, 32)
	if err != nil || u > 0o7777 {
		return fmt.Errorf("mode %q: want octal permission bits", s)
	}
	*p = permFromUnix(uint32(u))
	return nil
}

func typeOf(fi fs.FileInfo) Type {
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return File
	case m.IsDir():
		return Dir
	case m&fs.ModeSymlink != 0:
		return Symlink
	case m&fs.ModeNamedPipe != 0:
		return Fifo
	case m&fs.ModeSocket != 0:
		return Socket
	}
	return Device
}
