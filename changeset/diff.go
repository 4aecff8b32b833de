package changeset

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// maxDiffSize bounds the files Diff compares line by line; larger ones are
// only said to differ.
const maxDiffSize = 16 << 20

// Diff writes every change to w as a unified diff in the layout of git diff:
// text files as hunks against the originals, binary files named ("Binary
// files a/x and b/x differ"), symlinks as their targets, new, deleted and
// changed permissions as mode lines. Directories, fifos, sockets and devices
// have no content and appear only in List.
//
// The output is safe to show on a terminal: names are quoted as [Quote]
// does, and every line is passed through [VisibleLine], so escape
// sequences, lone carriage returns and other control characters appear as
// ^[, ^M and the like instead of acting on the terminal. A file is binary
// when it holds a NUL byte anywhere, not only near its start. The lines of
// a file with such characters therefore differ from its bytes, and patch
// will not apply its hunks as shown.
//
// Paths are relative to the root when the changeset has one, so that the
// diff applies with patch -p1 inside it; with several roots they are
// absolute (a/home/me/proj/main.go), for patch -p1 in /.
func (c *Changeset) Diff(w io.Writer) error {
	defer longPaths()()
	changes, err := c.List()
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for _, ch := range changes {
		if err := c.writeDiff(bw, ch); err != nil {
			return fmt.Errorf("diff %s: %w", Quote(ch.RealPath()), err)
		}
	}
	return bw.Flush()
}

// side is one side of a file's diff: a regular file or a symlink.
type side struct {
	path     string
	mode     uint32 // as git writes it: 0100644, 0120000
	data     []byte
	tooLarge bool
}

func (c *Changeset) writeDiff(w io.Writer, ch Change) error {
	r, _ := c.root(ch.Root)
	var old, new *side
	var err error
	if ch.Status != Added {
		if old, err = readSide(ch.RealPath(), ch.OldType, ch.OldMode, ch.OldSize); err != nil {
			return err
		}
	}
	if ch.Status != Deleted {
		if new, err = readSide(filepath.Join(r.Upper, filepath.FromSlash(ch.Path)), ch.Type, ch.Mode, ch.Size); err != nil {
			return err
		}
	}
	name := c.entryName(ch)
	if old != nil && new != nil && old.mode&0o170000 != new.mode&0o170000 {
		// As in git, a change of type is a deletion and an addition.
		if err := writeFileDiff(w, name, old, nil); err != nil {
			return err
		}
		old = nil
	}
	if old == nil && new == nil {
		return nil
	}
	return writeFileDiff(w, name, old, new)
}

// entryName is how Diff and Export name the path of ch: relative to its
// root when the changeset has one, else absolute without the leading slash.
func (c *Changeset) entryName(ch Change) string {
	if len(c.roots) == 1 {
		return ch.Path
	}
	return strings.TrimPrefix(filepath.ToSlash(ch.RealPath()), "/")
}

func readSide(p string, t Type, m Perm, size int64) (*side, error) {
	switch t {
	case Symlink:
		// A target is one line, quoted when it holds a newline or other
		// characters unsafe to print.
		target, err := readlink(p)
		return &side{path: p, mode: 0o120000, data: []byte(Quote(target))}, err
	case File:
		s := &side{path: p, mode: 0o100000 | m.Unix()}
		if size > maxDiffSize {
			s.tooLarge = true
			return s, nil
		}
		var err error
		s.data, err = readFile(p)
		return s, err
	}
	return nil, nil
}

func writeFileDiff(w io.Writer, p string, old, new *side) error {
	a, b := Quote("a/"+p), Quote("b/"+p)
	fmt.Fprintf(w, "diff --git %s %s\n", a, b)
	switch {
	case old == nil:
		fmt.Fprintf(w, "new file mode %06o\n", new.mode)
		a = "/dev/null"
	case new == nil:
		fmt.Fprintf(w, "deleted file mode %06o\n", old.mode)
		b = "/dev/null"
	case old.mode != new.mode:
		fmt.Fprintf(w, "old mode %06o\nnew mode %06o\n", old.mode, new.mode)
	}
	switch {
	case old.isTooLarge() || new.isTooLarge():
		if old == nil || new == nil || !sameLargeFile(old, new) {
			fmt.Fprintf(w, "Files %s and %s differ (over %d MiB, not compared line by line)\n", a, b, maxDiffSize>>20)
		}
	case isBinary(old.content()) || isBinary(new.content()):
		if !bytes.Equal(old.content(), new.content()) {
			fmt.Fprintf(w, "Binary files %s and %s differ\n", a, b)
		}
	default:
		return writeVisible(w, udiff.Unified(a, b, string(old.content()), string(new.content())))
	}
	return nil
}

// writeVisible writes the lines of a unified diff through VisibleLine. A
// carriage return before the newline, as in files with CRLF line ends, is
// kept: it cannot hide anything.
func writeVisible(w io.Writer, diff string) error {
	for line := range strings.Lines(diff) {
		body := strings.TrimSuffix(line, "\n")
		end := line[len(body):]
		if b, ok := strings.CutSuffix(body, "\r"); ok && end != "" {
			body, end = b, "\r"+end
		}
		if _, err := io.WriteString(w, VisibleLine(body)+end); err != nil {
			return err
		}
	}
	return nil
}

func (s *side) content() []byte {
	if s == nil {
		return nil
	}
	return s.data
}

func (s *side) isTooLarge() bool { return s != nil && s.tooLarge }

func sameLargeFile(old, new *side) bool {
	same, err := sameContent(old.path, new.path)
	return err == nil && same
}

// isBinary reports whether b holds a NUL byte anywhere: a file that starts
// as text cannot hide binary content further on.
func isBinary(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 }
