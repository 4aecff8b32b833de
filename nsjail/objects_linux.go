package nsjail

import (
	"golang.org/x/sys/unix"
)

// What the creator refuses in the host's objects directories that staged
// git directories show (see internal/guard/objects_linux.go): a new file
// naming other object stores, and anything through which git on the host
// would read or write objects elsewhere, a symlink or a directory moved
// in. The paths are read only where some stage binds one.

// refusedNew answers a call that would make, in the info directory of
// such an objects directory, a file naming other object stores; ok is
// false for any other.
func (c *creator) refusedNew(pl place) (a answer, ok bool) {
	if !c.sess.BindsObjects() || !c.sess.MayProtect(pl.name) || exists(pl) {
		return answer{}, false
	}
	dir := dirPath(pl.dir)
	if !c.sess.Refuses(dir, pl.name) {
		return answer{}, false
	}
	return c.refuse(dir, pl.name, "would have git read objects from elsewhere", unix.EPERM), true
}

// intoObjects answers a call that would put a symlink, or a directory made
// elsewhere, at pl in such an objects directory; ok is false for any
// other. isLink and isDir say what the call puts there.
func (c *creator) intoObjects(pl place, isLink, isDir bool) (a answer, ok bool) {
	if !isLink && !isDir || !c.sess.BindsObjects() {
		return answer{}, false
	}
	dir := dirPath(pl.dir)
	if !c.sess.InObjects(dir) {
		return answer{}, false
	}
	if isLink {
		return c.refuse(dir, pl.name, "a symlink in git's objects", unix.EPERM), true
	}
	return c.refuse(dir, pl.name, "a directory moved into git's objects (copy it there instead)", unix.EXDEV), true
}

// kindAt tells whether what fd (O_PATH) or name in dir is, is a symlink or
// a directory.
func kindAt(dir int, name string) (isLink, isDir bool) {
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != nil {
		return false, false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFLNK, st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// movedIntoObjects is intoObjects for a rename of from to to, and of to to
// from as well for an exchange.
func (c *creator) movedIntoObjects(from, to place, flags uint) (a answer, ok bool) {
	if !c.sess.BindsObjects() {
		return answer{}, false
	}
	if isLink, isDir := kindAt(from.dir, from.opName()); isLink || isDir {
		if a, ok := c.intoObjects(to, isLink, isDir); ok {
			return a, true
		}
	}
	if flags&unix.RENAME_EXCHANGE != 0 {
		if isLink, isDir := kindAt(to.dir, to.opName()); isLink || isDir {
			return c.intoObjects(from, isLink, isDir)
		}
	}
	return answer{}, false
}
