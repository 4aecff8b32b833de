package guard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/pathtree"
)

// Merge applies what upper, an overlayfs upper directory over the git
// directory host (or a git directory created from nothing, over an empty
// one), changed, through the allowlist: objects, refs, logs, an index whose
// paths git would accept, HEAD and the other state files, the state of a
// merge, rebase, cherry-pick or revert in progress that resumes nothing of
// the command's choosing, the same for linked worktrees (whose gitdir must
// name a .git inside one of roots) and submodules, and config when every
// key that changed is allowed. Each file is written to a temporary name and
// renamed into place, except where git itself writes in place (a reflog
// that grew is appended to, a commit message rewritten). Everything else
// is left out and returned, one line each, named after report (the git
// directory's path as the command saw it). The files in copied (see
// copyUnmapped) land only where their content changed.
//
// Preconditions: nothing else writes to upper meanwhile.
func Merge(upper, host, report string, roots []string, copied map[string]bool) []string {
	u, err := os.OpenRoot(upper)
	if err != nil {
		return []string{fmt.Sprintf("%s: all changes (%v)", report, err)}
	}
	defer u.Close()
	h, err := os.OpenRoot(host)
	if err != nil {
		return []string{fmt.Sprintf("%s: all changes (%v)", report, err)}
	}
	defer h.Close()
	m := &merger{u: u, h: h, upper: upper, report: report, roots: roots, copied: copied}
	m.dir(".", false)
	m.indexes.Wait()
	slices.Sort(m.dropped)
	return m.dropped
}

type merger struct {
	u, h   *os.Root
	upper  string
	report string
	roots  []string
	copied map[string]bool
	// indexes are the indexes being checked and written meanwhile: the
	// largest files of a commit, which name only objects, already there.
	indexes sync.WaitGroup

	mu      sync.Mutex
	dropped []string
}

func (m *merger) drop(rel, why string) {
	if m.template(rel) {
		return // git init's templates: never run
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropped = append(m.dropped, fmt.Sprintf("%s: %s", path.Join(m.report, rel), why))
}

// template reports whether rel is what git init copies from its templates
// and runs nothing from: sample hooks, the hooks directory holding only
// those, and the empty branches directory.
func (m *merger) template(rel string) bool {
	base := path.Base(rel)
	if path.Base(path.Dir(rel)) == "hooks" && strings.HasSuffix(base, ".sample") {
		return true
	}
	if base != "hooks" && base != "branches" {
		return false
	}
	f, err := m.u.Open(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	return err == nil && !slices.ContainsFunc(ents, func(e fs.DirEntry) bool {
		return base == "branches" || !strings.HasSuffix(e.Name(), ".sample") || !e.Type().IsRegular()
	})
}

// order puts objects first and the files that name them last, so that the
// host never sees a ref to an object it lacks. The index, the largest
// file, names only blobs, there by then: it is checked and written
// meanwhile, from as early as it can be, right after config (whose object
// format it is read with).
func order(name string) int {
	switch name {
	case "objects":
		return 0
	case "config":
		return 1
	case "index":
		return 2
	case "HEAD", "packed-refs":
		return 4
	}
	return 3
}

func (m *merger) dir(rel string, opaque bool) {
	f, err := m.u.Open(rel)
	if err != nil {
		m.drop(rel, err.Error())
		return
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		m.drop(rel, err.Error())
		return
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int {
		if d := order(a.Name()) - order(b.Name()); d != 0 {
			return d
		}
		return strings.Compare(a.Name(), b.Name())
	})
	if opaque {
		m.removeOthers(rel, ents)
	}
	for _, e := range ents {
		p := e.Name()
		if rel != "." {
			p = rel + "/" + p
		}
		m.entry(p)
	}
}

// removeOthers removes from the host what an opaque directory (removed
// and made again inside) no longer has.
func (m *merger) removeOthers(rel string, keep []fs.DirEntry) {
	f, err := m.h.Open(rel)
	if err != nil {
		return
	}
	ents, _ := f.ReadDir(-1)
	f.Close()
	for _, e := range ents {
		if slices.ContainsFunc(keep, func(k fs.DirEntry) bool { return k.Name() == e.Name() }) {
			continue
		}
		m.remove(path.Join(rel, e.Name()))
	}
}

func (m *merger) allowed(rel string, isDir bool) bool {
	if isDir {
		return dirAllowed(rel)
	}
	return classify(rel) != dropped
}

func (m *merger) remove(rel string) {
	fi, err := m.h.Lstat(rel)
	if err != nil {
		return
	}
	if !m.allowed(rel, fi.IsDir()) || rel == "config" {
		m.drop(rel, "removal")
		return
	}
	if err := m.h.RemoveAll(rel); err != nil {
		m.drop(rel, "removal: "+err.Error())
	}
}

func (m *merger) entry(rel string) {
	fi, err := m.u.Lstat(rel)
	if err != nil {
		m.drop(rel, err.Error())
		return
	}
	switch {
	case isWhiteout(fi):
		m.remove(rel)
	case fi.IsDir():
		if !dirAllowed(rel) {
			m.drop(rel, "not an allowed directory")
			return
		}
		if bad := m.badState(rel); bad != "" {
			m.drop(rel, bad)
			return
		}
		if hf, err := m.h.Lstat(rel); err == nil && !hf.IsDir() {
			m.h.RemoveAll(rel)
		}
		if err := m.h.Mkdir(rel, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			m.drop(rel, err.Error())
			return
		}
		m.dir(rel, opaqueDir(filepath.Join(m.upper, rel)))
	case fi.Mode().IsRegular():
		m.file(rel, fi)
	default:
		m.drop(rel, "not a regular file or directory")
	}
}

// badState says why a state directory (rebase-merge, rebase-apply,
// sequencer) must not land: a file of it the command wrote that git,
// resuming on the host, would run or write something of the command's
// choosing from (see badStateFile).
func (m *merger) badState(rel string) string {
	dir := path.Base(rel)
	for _, f := range stateChecks[dir] {
		if b, err := m.u.ReadFile(rel + "/" + f); err == nil {
			if bad := badStateFile(dir, f, b); bad != "" {
				return bad
			}
		}
	}
	return ""
}

func (m *merger) file(rel string, fi fs.FileInfo) {
	if m.copied[rel] && m.unchanged(rel, fi) {
		return
	}
	switch classify(rel) {
	case plain, todo:
		m.copy(rel, fi)
	case gitIndex:
		m.indexes.Go(func() { m.index(rel, fi) })
	case config:
		m.config(rel, fi)
	case wtCommondir:
		b, err := m.u.ReadFile(rel)
		if err != nil || strings.TrimSpace(string(b)) != "../.." {
			m.drop(rel, "does not name this repository")
			return
		}
		m.copy(rel, fi)
	case wtGitdir:
		b, err := m.u.ReadFile(rel)
		p := strings.TrimSpace(string(b))
		if err != nil || !filepath.IsAbs(p) || path.Base(p) != GitDir || path.Clean(p) != p ||
			!slices.ContainsFunc(m.roots, func(r string) bool { return pathtree.Within(p, r) }) {
			m.drop(rel, "does not name a .git inside a writable path")
			return
		}
		m.copy(rel, fi)
	default:
		m.drop(rel, "not an allowed file")
	}
}

// index lands an index (or a split index's shared part) that holds no
// path git would write outside the work tree or into a git directory, read
// with the object names of the repository's format.
func (m *merger) index(rel string, fi fs.FileInfo) {
	src, err := m.u.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		m.drop(rel, err.Error())
		return
	}
	defer src.Close()
	// Mapped, not read: the check reads the staged file where it lies,
	// and the copy goes from file to file inside the kernel.
	var b []byte
	if fi.Size() > 0 {
		if b, err = unix.Mmap(int(src.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED); err != nil {
			m.drop(rel, err.Error())
			return
		}
		defer unix.Munmap(b)
	}
	for _, size := range m.hashSizes(rel) {
		if bad := checkIndex(b, size); bad != "" {
			m.drop(rel, "not an index git may read: "+bad)
			return
		}
	}
	m.place(rel, fi, func(dst *os.File) error { return copyData(dst, src, fi.Size()) })
}

// hashSizes returns the sizes of object names git reads the index at rel
// with: those of the object format the config of its git directory names
// (for a linked worktree's, the common one's), as it is on the host once
// config has landed; both when that config cannot be read.
func (m *merger) hashSizes(rel string) []int {
	dir := path.Dir(rel)
	configs := []string{path.Join(dir, "config")}
	if up := path.Dir(dir); path.Base(up) == "worktrees" {
		configs = append(configs, path.Join(path.Dir(up), "config"))
	}
	var sizes []int
	for _, c := range configs {
		b, err := m.h.ReadFile(c)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		es, perr := ParseConfig(b)
		if err != nil || perr != nil {
			sizes = append(sizes, 20, 32)
			continue
		}
		size := 20
		for _, e := range es {
			if e.Key == "extensions.objectformat" {
				size = 20
				if strings.EqualFold(e.Value, "sha256") {
					size = 32
				}
			}
		}
		sizes = append(sizes, size)
	}
	if len(sizes) == 0 {
		return []int{20}
	}
	slices.Sort(sizes)
	return slices.Compact(sizes)
}

func (m *merger) config(rel string, fi fs.FileInfo) {
	nb, err := m.u.ReadFile(rel)
	if err != nil {
		m.drop(rel, err.Error())
		return
	}
	ob, err := m.h.ReadFile(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		m.drop(rel, err.Error())
		return
	}
	if bytes.Equal(nb, ob) {
		return
	}
	ne, err := ParseConfig(nb)
	if err != nil {
		m.drop(rel, "cannot be checked: "+err.Error())
		return
	}
	oe, err := ParseConfig(ob)
	if err != nil {
		m.drop(rel, "the host's config cannot be compared: "+err.Error())
		return
	}
	var bad []string
	for _, k := range configChanges(oe, ne) {
		for _, e := range ne {
			if e.Key != k {
				continue
			}
			if ok, why := AllowedConfig(k, e.Value); !ok {
				bad = append(bad, fmt.Sprintf("%s (%s)", k, why))
				break
			}
		}
		if !slices.ContainsFunc(ne, func(e ConfigEntry) bool { return e.Key == k }) {
			if ok, _ := AllowedConfig(k, ""); !ok {
				bad = append(bad, k+" (removed)")
			}
		}
	}
	if len(bad) > 0 {
		m.drop(rel, "changes keys that are not allowed: "+strings.Join(slices.Compact(bad), ", "))
		return
	}
	m.copy(rel, fi)
}

// unchanged reports whether the upper's file rel, fi, has the content of
// the host's.
func (m *merger) unchanged(rel string, fi fs.FileInfo) bool {
	a, err := m.u.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer a.Close()
	b, err := m.h.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer b.Close()
	bi, err := b.Stat()
	return err == nil && bi.Mode().IsRegular() && bi.Size() == fi.Size() && samePrefix(a, b, fi.Size())
}

// copy lands the upper's file on the host: appended when it is a reflog
// that grew, otherwise placed whole.
func (m *merger) copy(rel string, fi fs.FileInfo) {
	src, err := m.u.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		m.drop(rel, err.Error())
		return
	}
	defer src.Close()
	if m.appendLog(rel, src, fi.Size()) || m.rewrite(rel, src, fi.Size()) {
		return
	}
	m.place(rel, fi, func(dst *os.File) error { return copyData(dst, src, fi.Size()) })
}

// place writes rel, with fi's permissions, to the host under a temporary
// name and renames it into place.
func (m *merger) place(rel string, fi fs.FileInfo, write func(dst *os.File) error) {
	tmp := path.Join(path.Dir(rel), ".corral-merge-"+path.Base(rel))
	m.h.Remove(tmp)
	dst, err := m.h.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, fi.Mode().Perm()&0o666)
	if err != nil {
		m.drop(rel, err.Error())
		return
	}
	err = write(dst)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if hf, lerr := m.h.Lstat(rel); lerr == nil && hf.IsDir() {
			m.h.RemoveAll(rel)
		}
		err = m.h.Rename(tmp, rel)
	}
	if err != nil {
		m.h.Remove(tmp)
		m.drop(rel, err.Error())
	}
}

// appendLog lands a reflog that only grew inside (git appends to reflogs
// and never rewrites them, except on expiry) the way git writes one: the
// new lines appended to the host's file in one write, which spares
// rewriting the whole log and renaming it over the old one. It reports
// false, having changed nothing, when rel is not a reflog or the host's
// file is not a prefix of the staged one; the caller then copies it whole.
func (m *merger) appendLog(rel string, src *os.File, size int64) bool {
	if !strings.HasPrefix(rel, "logs/") && !strings.Contains(rel, "/logs/") {
		return false
	}
	h, err := m.h.OpenFile(rel, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer h.Close()
	r, err := m.h.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer r.Close()
	hi, err := h.Stat()
	if err != nil || !hi.Mode().IsRegular() || !sameFile(hi, r) || hi.Size() >= size {
		return false
	}
	if !samePrefix(r, src, hi.Size()) {
		return false
	}
	tail := make([]byte, size-hi.Size())
	if _, err := src.ReadAt(tail, hi.Size()); err != nil {
		return false
	}
	n, err := h.Write(tail)
	if err != nil && n > 0 {
		// Part of the tail landed: the copy that follows replaces the
		// file with the staged one as a whole.
		return false
	}
	return err == nil
}

// inPlace are the files git itself writes in place (with fopen "w"): a
// message git reads back only in the command that wrote it.
var inPlace = []string{"COMMIT_EDITMSG", "MERGE_MSG", "SQUASH_MSG", "TAG_EDITMSG"}

// rewrite lands such a file the way git writes it, over the host's own,
// which spares making a file and renaming it over the old one. It reports
// false, having changed nothing, for any other file, or when the host's is
// not a regular file of one link; the caller then places it whole.
func (m *merger) rewrite(rel string, src *os.File, size int64) bool {
	if !slices.Contains(inPlace, path.Base(rel)) {
		return false
	}
	h, err := m.h.OpenFile(rel, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer h.Close()
	var st unix.Stat_t
	if unix.Fstat(int(h.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		return false
	}
	if h.Truncate(0) != nil || copyData(h, src, size) != nil {
		// The copy that follows replaces what is left as a whole.
		src.Seek(0, io.SeekStart)
		return false
	}
	return true
}

// sameFile reports whether f is the file fi describes.
func sameFile(fi fs.FileInfo, f *os.File) bool {
	fj, err := f.Stat()
	return err == nil && os.SameFile(fi, fj)
}

// samePrefix reports whether the first n bytes of a and b are equal.
func samePrefix(a, b *os.File, n int64) bool {
	const chunk = 64 << 10
	ba, bb := make([]byte, min(n, chunk)), make([]byte, min(n, chunk))
	for off := int64(0); off < n; off += chunk {
		l := min(n-off, chunk)
		if _, err := a.ReadAt(ba[:l], off); err != nil {
			return false
		}
		if _, err := b.ReadAt(bb[:l], off); err != nil {
			return false
		}
		if !bytes.Equal(ba[:l], bb[:l]) {
			return false
		}
	}
	return true
}

// copyData copies size bytes of src to dst inside the kernel (sendfile
// from the staging tmpfs to any file), falling back to a copy through
// memory where the kernel refuses before anything was copied.
func copyData(dst, src *os.File, size int64) error {
	var done int64
	for done < size {
		n, err := unix.Sendfile(int(dst.Fd()), int(src.Fd()), nil, int(min(size-done, 1<<30)))
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			if done == 0 && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)) {
				_, err = io.Copy(dst, src)
			}
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		done += int64(n)
	}
	return nil
}

// isWhiteout reports whether fi is overlayfs's mark of a removed file: a
// character device 0/0.
func isWhiteout(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode()&fs.ModeCharDevice != 0 && st.Rdev == 0
}

// opaqueDir reports whether overlayfs marked a directory as replacing the
// lower one's contents.
func opaqueDir(p string) bool {
	var b [1]byte
	n, err := unix.Lgetxattr(p, "user.overlay.opaque", b[:])
	return err == nil && n == 1 && b[0] == 'y'
}
