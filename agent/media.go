package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corralhq/corral/internal/pathtree"
)

// InboundDir is where StageMedia puts files, relative to the workspace.
const InboundDir = "media/inbound"

// ErrOutsideMedia is returned for a file that does not lie in the media
// directory.
var ErrOutsideMedia = errors.New("outside the media directory")

// maxMediaName is the longest name StageMedia gives a file.
const maxMediaName = 100

// StageMedia copies src, a file handed to the agent (an attachment), into
// the session's workspace under media/inbound/ and returns its path as the
// session's commands see it (/workspace/media/inbound/photo.jpg). src must
// be a regular file inside the agent's media_dir once symlinks are
// resolved; its name is sanitised, and a name already taken gets a -1, -2
// ... suffix. The copy goes through an os.Root on the workspace, so a
// command that planted a symlink there cannot redirect it.
func (s *Session) StageMedia(src string) (string, error) {
	if s.mediaDir == "" {
		return "", fmt.Errorf("stage media %s: no media_dir configured", src)
	}
	in, err := openMedia(s.mediaDir, src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	root, err := os.OpenRoot(s.Sandbox.Workspace())
	if err != nil {
		return "", fmt.Errorf("stage media: %w", err)
	}
	defer root.Close()
	if err := root.MkdirAll(InboundDir, 0o755); err != nil {
		return "", fmt.Errorf("stage media: %w", err)
	}
	name, err := copyNew(root, in, sanitizeName(filepath.Base(src)))
	if err != nil {
		return "", fmt.Errorf("stage media %s: %w", src, err)
	}
	return path.Join(s.Sandbox.WorkspaceDir(), InboundDir, name), nil
}

// openMedia opens src for reading when it is a regular file in dir.
func openMedia(dir, src string) (*os.File, error) {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("stage media: media_dir: %w", err)
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return nil, fmt.Errorf("stage media %s: %w", src, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("stage media %s: %w", src, err)
	}
	if !pathtree.Within(real, realDir) || real == realDir {
		return nil, &fs.PathError{Op: "stage media", Path: src, Err: ErrOutsideMedia}
	}
	// Opened through a root on dir: a directory swapped for a symlink
	// since the check cannot lead outside it.
	root, err := os.OpenRoot(realDir)
	if err != nil {
		return nil, fmt.Errorf("stage media: media_dir: %w", err)
	}
	defer root.Close()
	rel, _ := pathtree.Rel(realDir, real)
	f, err := root.OpenFile(rel, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, fmt.Errorf("stage media %s: %w", src, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "stage media", Path: src, Err: errors.New("not a regular file")}
	}
	return f, nil
}

// sanitizeName keeps letters, digits, '.', '_' and '-' of name, replaces
// the rest with '_', drops leading dots (no hidden or special names) and
// keeps the extension when it shortens a long name.
func sanitizeName(name string) string {
	var b strings.Builder
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if len(s) > maxMediaName {
		ext := path.Ext(s)
		if len(ext) > 16 {
			ext = ""
		}
		s = s[:maxMediaName-len(ext)] + ext
	}
	if s == "" || strings.Trim(s, "_") == "" {
		s = "file"
	}
	return s
}

// copyNew copies in to a new file in the inbound directory named name, or
// name with a -N suffix before its extension when taken, and returns the
// name used.
func copyNew(root *os.Root, in io.Reader, name string) (string, error) {
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 0; i < 10000; i++ {
		n := name
		if i > 0 {
			n = stem + "-" + strconv.Itoa(i) + ext
		}
		out, err := root.OpenFile(path.Join(InboundDir, n), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return "", err
		}
		return n, out.Close()
	}
	return "", errors.New("too many files of that name")
}
