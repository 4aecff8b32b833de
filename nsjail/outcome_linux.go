package nsjail

import (
	"bufio"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/corralhq/corral/seccomp"
)

// A write the paths' policy refuses is a refusal only when the policy is
// why it fails: mkdir -p of an existing /usr fails with EEXIST, rm -f of a
// missing file with ENOENT, a write into a directory the user may not
// write in with EACCES, sandbox or not. The listener lets most such calls
// go on in the kernel and never sees their result, so it decides ahead
// what the host alone would answer: failsAnyway tells whether the call
// fails for a reason the host has as well. It looks only where the policy
// refuses, so an ordinary command costs nothing more; what it reads are
// hints, as the names are (the command may change the files meanwhile).

// creds are a command process's identity, as the kernel checks a file's
// permissions: its file-system uid and gid and its groups.
type creds struct {
	uid, gid uint32
	groups   []uint32
}

// credsOf reads thread tid's creds from /proc; ok is false when they
// cannot be read.
func credsOf(tid int) (creds, bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return creds{}, false
	}
	defer f.Close()
	var c creds
	var have int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(val)
		switch key {
		case "Uid", "Gid":
			if len(fields) < 4 {
				return creds{}, false
			}
			id, err := strconv.ParseUint(fields[3], 10, 32) // the file-system id
			if err != nil {
				return creds{}, false
			}
			if key == "Uid" {
				c.uid = uint32(id)
			} else {
				c.gid = uint32(id)
			}
			have++
		case "Groups":
			for _, g := range fields {
				if id, err := strconv.ParseUint(g, 10, 32); err == nil {
					c.groups = append(c.groups, uint32(id))
				}
			}
		}
	}
	return c, have == 2
}

// may tells whether c may access a file of st's owner and mode with want
// (unix.W_OK, unix.X_OK bits) by its mode bits alone. Root may: on the
// host, a root caller's processes hold the capabilities that override
// permissions, which the sandbox takes from its command. Access control
// lists are not read: a file with one is judged by its mode.
func (c creds) may(st *unix.Stat_t, want uint32) bool {
	if c.uid == 0 {
		return true
	}
	mode := st.Mode & 0o777
	var bits uint32
	switch {
	case st.Uid == c.uid:
		bits = mode >> 6
	case st.Gid == c.gid || slices.Contains(c.groups, st.Gid):
		bits = mode >> 3
	default:
		bits = mode
	}
	return bits&want == want
}

// failsAnyway tells whether call n, writing paths (call.Paths' names, in
// order, resolved), fails whatever the sandbox's paths allow: the name it
// creates exists, the name it changes does not, or the caller's own
// permissions on the host refuse it. It answers false when it cannot tell.
func failsAnyway(n seccomp.Notification, call seccomp.WriteCall, paths []string) bool {
	if len(paths) != len(call.Paths) || len(paths) == 0 {
		return false
	}
	c, ok := credsOf(n.Pid)
	if !ok {
		return false
	}
	a := n.Args
	p := paths[0]
	switch call.Name {
	case "open", "openat", "creat":
		flags := uint64(unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC)
		if call.FlagsArg >= 0 {
			flags = a[call.FlagsArg]
		}
		return openFails(c, p, flags)
	case "mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat":
		return createFails(c, p)
	case "unlink", "rmdir":
		return removeFails(c, p, call.Name == "rmdir")
	case "unlinkat":
		return removeFails(c, p, a[2]&unix.AT_REMOVEDIR != 0)
	case "rename", "renameat", "renameat2":
		var flags uint64
		if call.Name == "renameat2" {
			flags = a[4]
		}
		return renameFails(c, p, paths[1], flags)
	case "truncate":
		return openFails(c, p, unix.O_WRONLY)
	case "chmod", "fchmodat", "fchmodat2":
		st, err := statPath(p, call.Name == "fchmodat2" && a[3]&unix.AT_SYMLINK_NOFOLLOW != 0)
		return missing(err) || err == nil && c.uid != 0 && st.Uid != c.uid
	case "chown", "lchown", "fchownat":
		owner, group, nofollow := a[1], a[2], call.Name == "lchown"
		if call.Name == "fchownat" {
			owner, group, nofollow = a[2], a[3], a[4]&unix.AT_SYMLINK_NOFOLLOW != 0
		}
		st, err := statPath(p, nofollow)
		if missing(err) {
			return true
		}
		return err == nil && c.uid != 0 && !mayChown(c, st, uint32(owner), uint32(group))
	}
	return false
}

// mayChown tells whether c, not root, may give st the owner and group
// (-1: unchanged): only its owner may, keeping the owner and choosing one
// of its own groups.
func mayChown(c creds, st *unix.Stat_t, owner, group uint32) bool {
	const same = ^uint32(0)
	if st.Uid != c.uid || owner != same && owner != st.Uid {
		return false
	}
	return group == same || group == st.Gid || group == c.gid || slices.Contains(c.groups, group)
}

// openFails is failsAnyway for an open with flags.
func openFails(c creds, p string, flags uint64) bool {
	excl := flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL
	st, err := statPath(p, excl || flags&unix.O_NOFOLLOW != 0)
	switch {
	case err == nil && excl:
		return true // EEXIST
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return true // EISDIR: a directory is not opened to write
	case err == nil:
		want := uint32(unix.W_OK)
		if flags&unix.O_ACCMODE == unix.O_RDONLY && flags&unix.O_TRUNC == 0 {
			want = unix.R_OK
		}
		return !c.may(st, want)
	case !missing(err):
		return false
	case flags&unix.O_CREAT == 0:
		return true // ENOENT
	}
	if _, err := statPath(p, true); err == nil {
		return false // a dangling symlink: its target is made
	}
	return createFails(c, p)
}

// createFails is failsAnyway for a call that makes the name p.
func createFails(c creds, p string) bool {
	if _, err := statPath(p, true); err == nil {
		return true // EEXIST
	}
	return parentRefuses(c, p)
}

// parentRefuses tells whether the directory p would be made or removed in
// is missing, is not one, or refuses c.
func parentRefuses(c creds, p string) bool {
	dir, err := statPath(path.Dir(p), false)
	if missing(err) {
		return true
	}
	if err != nil {
		return false
	}
	return dir.Mode&unix.S_IFMT != unix.S_IFDIR || !c.may(dir, unix.W_OK|unix.X_OK)
}

// removeFails is failsAnyway for unlink or rmdir (dir) of p.
func removeFails(c creds, p string, dir bool) bool {
	st, err := statPath(p, true)
	if missing(err) {
		return true
	}
	if err != nil {
		return false
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if dir != isDir || dir && !dirEmpty(p) {
		return true // ENOTDIR, EISDIR, ENOTEMPTY
	}
	return removeRefused(c, p, st)
}

// removeRefused tells whether the directory holding p, whose file st is,
// refuses c to remove or replace it, sticky bit included.
func removeRefused(c creds, p string, st *unix.Stat_t) bool {
	if parentRefuses(c, p) {
		return true
	}
	parent, err := statPath(path.Dir(p), false)
	if err != nil || c.uid == 0 || parent.Mode&unix.S_ISVTX == 0 {
		return false
	}
	return st.Uid != c.uid && parent.Uid != c.uid
}

// renameFails is failsAnyway for a rename of from onto to with renameat2's
// flags.
func renameFails(c creds, from, to string, flags uint64) bool {
	st, err := statPath(from, true)
	if missing(err) {
		return true
	}
	if err != nil {
		return false
	}
	if removeRefused(c, from, st) {
		return true
	}
	if _, err := statPath(to, true); err == nil && flags&unix.RENAME_NOREPLACE != 0 {
		return true
	}
	return parentRefuses(c, to)
}

// dirEmpty tells whether directory p holds nothing; true when it cannot be
// read, as the kernel would not refuse rmdir for that.
func dirEmpty(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return true
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

func statPath(p string, nofollow bool) (*unix.Stat_t, error) {
	var st unix.Stat_t
	var err error
	if nofollow {
		err = unix.Lstat(p, &st)
	} else {
		err = unix.Stat(p, &st)
	}
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// missing tells whether err says a name or a directory on its way is not
// there.
func missing(err error) bool { return err == unix.ENOENT || err == unix.ENOTDIR }
