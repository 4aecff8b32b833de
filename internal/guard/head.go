package guard

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// GitDirAt reports whether git takes dir itself for a git directory: its
// HEAD is a symlink into refs/ or a file naming a ref or an object (git's
// own test, is_git_directory, also wants objects and refs, which a command
// can add or which a commondir can hold elsewhere). It errs on the side of
// yes for a HEAD it cannot read.
func GitDirAt(dir string) bool {
	p := filepath.Join(dir, HeadName)
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return false
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(p)
		return err == nil && strings.HasPrefix(t, "refs/")
	case !fi.Mode().IsRegular():
		return false
	}
	f, err := os.OpenFile(p, os.O_RDONLY, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	buf := make([]byte, 255)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return true
	}
	return validHead(buf[:n])
}

// validHead reports whether git would take b, a HEAD file's first bytes,
// for a HEAD: "ref:" and a name under refs/, or an object name. It errs on
// the side of yes.
func validHead(b []byte) bool {
	if rest, ok := bytes.CutPrefix(b, []byte("ref:")); ok {
		return bytes.HasPrefix(bytes.TrimLeft(rest, " \t"), []byte("refs/"))
	}
	if len(b) < 40 {
		return false
	}
	for _, c := range b[:40] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
