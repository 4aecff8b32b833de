package guard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// checkIndex says why git must not read b as an index (or as the shared
// part of a split index) whose object names are hashSize bytes long, or
// returns "". An index is git's own state, so git trusts it: `git checkout
// -- .` writes every entry it holds, and an entry named
// ".git/hooks/pre-commit" or "../x" is written there. So every path git
// could take from b (the entries, read in order or through the offset
// table git reads them by in threads, and the resolve-undo records) must
// be one git would have let into an index, and whatever cannot be read
// as git reads it is refused.
func checkIndex(b []byte, hashSize int) string {
	if len(b) < 12+hashSize || string(b[:4]) != "DIRC" {
		return "not an index"
	}
	ix := &index{b: b, end: len(b) - hashSize, version: binary.BigEndian.Uint32(b[4:]), hashSize: hashSize}
	if ix.version < 2 || ix.version > 4 {
		return fmt.Sprintf("index version %d", ix.version)
	}
	extStart, err := ix.entries(12, binary.BigEndian.Uint32(b[8:]))
	if err != nil {
		return err.Error()
	}
	walks := []int{extStart}
	// With an "end of index entries" record, git may read the extensions
	// from the offset it names, and the entries by the offset table there.
	if off, ok := ix.eoie(); ok && off != extStart {
		walks = append(walks, off)
	}
	split := true
	for _, off := range walks {
		linked, err := ix.extensions(off)
		if err != nil {
			return err.Error()
		}
		split = split && linked
	}
	if ix.unnamed > 0 && !split {
		return "an entry without a name"
	}
	return ""
}

type index struct {
	b        []byte
	end      int // where the checksum starts
	version  uint32
	hashSize int
	unnamed  int // entries without a name: a split index's replacements
}

var errTruncated = errors.New("truncated")

// entries checks n entries from off and returns where they end.
func (ix *index) entries(off int, n uint32) (int, error) {
	fixed := 40 + ix.hashSize + 2 // times, ids, mode, sizes, name, flags
	var prev []byte
	for ; n > 0; n-- {
		if off+fixed > ix.end {
			return 0, errTruncated
		}
		e := ix.b[off:ix.end]
		mode := binary.BigEndian.Uint32(e[24:])
		flags := binary.BigEndian.Uint16(e[fixed-2:])
		at := fixed
		if flags&0x4000 != 0 {
			at += 2 // extended flags
		}
		if at > len(e) {
			return 0, errTruncated
		}
		l := int(flags & 0xfff)
		var name []byte
		if ix.version == 4 {
			// The name is a count of bytes to take off the end of
			// the previous one and what follows them, NUL-ended. git
			// reads the first entry of the index, and of each block
			// of the offset table, without a previous one: it takes
			// none of it, whatever the count (and writes, there, the
			// length of the entry before, which the entries read in
			// order take off).
			strip, k := uvarint(e[at:])
			if prev == nil {
				strip = 0
			}
			if k <= 0 || strip > uint64(len(prev)) {
				return 0, errors.New("a malformed entry name")
			}
			rest := e[at+k:]
			z := bytes.IndexByte(rest, 0)
			if z < 0 {
				return 0, errTruncated
			}
			name = append(append([]byte(nil), prev[:len(prev)-int(strip)]...), rest[:z]...)
			if l != 0xfff && l != len(name) {
				return 0, errors.New("an entry whose name length is not its flags'")
			}
			at += k + z + 1
		} else {
			rest := e[at:]
			if l == 0xfff {
				l = bytes.IndexByte(rest, 0)
			}
			if l < 0 || l >= len(rest) {
				return 0, errTruncated
			}
			// git copies l bytes and takes them as a C string.
			name = rest[:l]
			at = (at + l + 8) &^ 7
			if at > len(e) {
				return 0, errTruncated
			}
		}
		if err := ix.name(name, mode); err != nil {
			return 0, err
		}
		prev = name
		off += at
	}
	return off, nil
}

func (ix *index) name(name []byte, mode uint32) error {
	if len(name) == 0 {
		ix.unnamed++
		return nil
	}
	if bad := badIndexPath(name, mode); bad != "" {
		return fmt.Errorf("an entry %s", bad)
	}
	return nil
}

// uvarint decodes git's offset varint (each continuation adds one before
// shifting); k is 0 when b ends first or the value overflows.
func uvarint(b []byte) (v uint64, k int) {
	for i, c := range b {
		if i > 0 {
			v++
			if v == 0 || v>>57 != 0 {
				return 0, 0
			}
			v <<= 7
		}
		v |= uint64(c & 127)
		if c&128 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// eoie returns the offset an "end of index entries" record at the end of
// the index names.
func (ix *index) eoie() (int, bool) {
	at := ix.end - (8 + 4 + ix.hashSize)
	if at < 12 || string(ix.b[at:at+4]) != "EOIE" || int(binary.BigEndian.Uint32(ix.b[at+4:])) != 4+ix.hashSize {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(ix.b[at+8:])), true
}

// extensions checks the extensions from off, and the entries of an
// offset table among them, and reports whether one links a shared index.
func (ix *index) extensions(off int) (linked bool, err error) {
	if off < 12 || off > ix.end {
		return false, errors.New("an extension offset out of range")
	}
	for off+8 <= ix.end {
		sig := string(ix.b[off : off+4])
		size := int(binary.BigEndian.Uint32(ix.b[off+4:]))
		if size > ix.end-off-8 {
			return false, fmt.Errorf("a truncated %q extension", sig)
		}
		data := ix.b[off+8 : off+8+size]
		switch sig {
		case "link":
			linked = true
		case "REUC":
			err = ix.resolveUndo(data)
		case "IEOT":
			err = ix.offsetTable(data)
		case "sdir":
		default:
			// git refuses an extension it does not know unless its
			// name starts with a capital: then it skips it.
			if sig[0] < 'A' || sig[0] > 'Z' {
				err = fmt.Errorf("an unknown extension %q", sig)
			}
		}
		if err != nil {
			return false, err
		}
		off += 8 + size
	}
	return linked, nil
}

// resolveUndo checks the paths of resolve-undo records: a path, three
// octal modes, and the object name of each non-zero one.
func (ix *index) resolveUndo(d []byte) error {
	for len(d) > 0 {
		z := bytes.IndexByte(d, 0)
		if z < 0 {
			return errors.New("a truncated resolve-undo record")
		}
		p := string(d[:z])
		d = d[z+1:]
		if p == "" {
			return errors.New("a resolve-undo record without a path")
		}
		var names int
		for range 3 {
			z := bytes.IndexByte(d, 0)
			if z < 0 {
				return errors.New("a truncated resolve-undo record")
			}
			if m := string(d[:z]); strings.Trim(m, "0") != "" {
				names++
			}
			d = d[z+1:]
		}
		if bad := badIndexPath([]byte(p), 0o100644); bad != "" {
			return fmt.Errorf("a resolve-undo record %s", bad)
		}
		if len(d) < names*ix.hashSize {
			return errors.New("a truncated resolve-undo record")
		}
		d = d[names*ix.hashSize:]
	}
	return nil
}

// offsetTable checks the blocks of entries git loads in threads, each
// from where the table says.
func (ix *index) offsetTable(d []byte) error {
	if len(d) < 4 || binary.BigEndian.Uint32(d) != 1 || (len(d)-4)%8 != 0 {
		return errors.New("a malformed offset table")
	}
	for d = d[4:]; len(d) > 0; d = d[8:] {
		off, n := int(binary.BigEndian.Uint32(d)), binary.BigEndian.Uint32(d[4:])
		if off < 12 {
			return errors.New("an offset table block out of range")
		}
		if _, err := ix.entries(off, n); err != nil {
			return err
		}
	}
	return nil
}

// badIndexPath says what is wrong with p as the path of an index entry of
// mode, the way git's verify_path does on Linux: no empty, ".", ".." or
// ".git" component (in any case), no leading or doubled slash, a trailing
// one only on a sparse directory entry, no symlink named .gitmodules or
// through a directory of that name, and none of the names NTFS would take
// for these (see ntfsBad). It returns "" for a path git would let into an
// index, and allocates only then.
func badIndexPath(p []byte, mode uint32) string {
	if bytes.IndexByte(p, 0) >= 0 {
		return fmt.Sprintf("%q holding a NUL", p)
	}
	for i := range p {
		if (i == 0 || p[i-1] == '/' || p[i-1] == '\\') && ntfsBad(p[i:], mode) {
			return fmt.Sprintf("%q, a name NTFS takes for .git or .gitmodules", p)
		}
	}
	rest := p
	if mode&0o170000 == 0o040000 {
		rest = bytes.TrimSuffix(rest, []byte("/"))
	}
	for {
		c := rest
		i := bytes.IndexByte(rest, '/')
		if i >= 0 {
			c, rest = rest[:i], rest[i+1:]
		}
		switch {
		case len(c) == 0:
			return fmt.Sprintf("%q", p)
		case c[0] != '.':
		case len(c) == 1, len(c) == 2 && c[1] == '.', asciiFold(c, GitDir):
			return fmt.Sprintf("%q", p)
		case mode&0o170000 == 0o120000 && asciiFold(c, ".gitmodules"):
			return fmt.Sprintf("%q, a symlink", p)
		}
		if i < 0 {
			return ""
		}
	}
}
