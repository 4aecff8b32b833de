package guard

import (
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/internal/pathtree"
)

// A staged git directory shows the host's own objects directory, writable,
// in place of the overlay's: git writes its objects there as it would with
// no sandbox, and the merge at exit has none to copy (a commit's objects
// were a quarter of its merge; a clone's or a large commit's, nearly all).
// Objects are named by their content and git runs nothing from them, and
// the merge let every one of them land anyway. What under objects/ could
// send git elsewhere stays out:
//
//   - info/alternates and info/http-alternates (objects read from another
//     place), which the merge drops: made new, the creator refuses them
//     (Refuses); present at start, they are bound read-only;
//   - symlinks and directories from elsewhere, through which git on the
//     host would read and write objects outside the repository: the
//     creator makes no symlink there and moves no directory or symlink in
//     (InObjects).
//
// Objects therefore reach the host while the command runs, before the refs
// that name them, which land at exit as before.

// alternates are the files of objects/info that name other object stores.
var alternates = []string{"alternates", "http-alternates"}

// bindObjects binds the objects directory of git directory d, held open as
// host (the host's, under the overlay), onto the stage's. It reports
// false, having changed nothing, where that is not plainly a directory
// with a plain info directory (the objects then stay staged with the
// rest).
func (s *Session) bindObjects(d string, host int) bool {
	fd, err := unix.Openat(host, "objects", unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if err := unix.Mkdirat(fd, "info", 0o755); err != nil && err != unix.EEXIST {
		return false
	}
	info, err := unix.Openat(fd, "info", unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false // a symlink or a file
	}
	defer unix.Close(info)
	type file struct {
		fd   int
		name string
	}
	var kept []file
	defer func() {
		for _, f := range kept {
			unix.Close(f.fd)
		}
	}()
	for _, name := range alternates {
		f, err := unix.Openat(info, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT {
			continue
		}
		if err != nil {
			return false
		}
		kept = append(kept, file{f, name})
		var st unix.Stat_t
		if unix.Fstat(f, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return false
		}
	}
	dst := d + "/objects"
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), dst, "", unix.MS_BIND, ""); err != nil {
		return false
	}
	for _, f := range kept {
		p := dst + "/info/" + f.name
		if err := bindFileReadOnly(f.fd, p); err != nil {
			unix.Unmount(dst, unix.MNT_DETACH)
			return false
		}
		s.readOnly = append(s.readOnly, p)
	}
	s.objects = append(s.objects, dst)
	return true
}

// bindFileReadOnly binds file f, open O_PATH, read-only onto p.
func bindFileReadOnly(f int, p string) error {
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(f), p, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	return unix.MountSetattr(unix.AT_FDCWD, p, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
}

// BindsObjects reports whether some stage shows the host's objects
// directory (bindObjects): only then may InObjects and Refuses hold.
func (s *Session) BindsObjects() bool { return s != nil && len(s.objects) > 0 }

// InObjects tells whether dir, an absolute clean path as the sandbox shows
// it, lies in an objects directory bound into a stage: nothing but files
// and directories made there belong in it.
func (s *Session) InObjects(dir string) bool {
	return s != nil && slices.ContainsFunc(s.objects, func(o string) bool { return pathtree.Within(dir, o) })
}

// Refuses tells whether a new entry name in dir must not be made at all:
// a file that would send git to other object stores.
func (s *Session) Refuses(dir, name string) bool {
	if s == nil || !slices.Contains(alternates, name) {
		return false
	}
	return slices.ContainsFunc(s.objects, func(o string) bool { return dir == o+"/info" })
}
