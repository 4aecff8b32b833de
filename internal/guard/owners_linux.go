package guard

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Overlayfs copies an entry up to the upper layer before the first change
// to it or in it, and gives the copy the owner and group of the original.
// An id the sandbox's user namespace does not map cannot be given: the
// copy-up fails (EOVERFLOW) and so does git's write. A repository shared
// through a group other than the user's primary one, or a .git where
// `sudo git` once made a file, has such entries, and git on the host
// writes there (its lock files take the user's ids). So before the overlay
// is mounted, each such entry of the git directory is copied into the
// upper layer, owned by the user, as git would rewrite it.

// copyUnmapped copies into upper (a directory descriptor) each entry of
// the git directory host (a descriptor) whose owner or group the user
// namespace does not map, and the directories above it. Objects are left
// out: the host's own are bound in their place (see bindObjects). It
// returns the files copied, by path relative to the git directory: the
// merge lands one only where the command changed it. An entry it cannot
// copy is left as it is: writing it fails inside as it would have.
func copyUnmapped(host, upper int) map[string]bool {
	uids, gids := ownIDMaps()
	if uids == nil || gids == nil {
		return nil
	}
	c := &upCopier{uids: uids, gids: gids, copied: map[string]bool{}}
	c.dir(host, func() (int, error) { return upper, nil }, "")
	return c.copied
}

type upCopier struct {
	uids, gids idMap
	copied     map[string]bool
}

// dir copies what needs it under lower, the directory at rel; upperOf
// returns its copy in the upper layer, made on first use.
func (c *upCopier) dir(lower int, upperOf func() (int, error), rel string) {
	names, err := readNames(lower)
	if err != nil {
		return
	}
	c.entries(lower, upperOf, rel, names)
}

func (c *upCopier) entries(lower int, upperOf func() (int, error), rel string, names []string) {
	for _, name := range names {
		p := path.Join(rel, name)
		var st unix.Stat_t
		if unix.Fstatat(lower, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		mapped := c.uids.has(st.Uid) && c.gids.has(st.Gid)
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if p == "objects" || p == "hooks" {
				continue // the host's own objects; hooks git never writes
			}
			sub, err := unix.Openat(lower, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			subNames, err := direntNames(sub)
			if err != nil {
				unix.Close(sub)
				continue
			}
			up := -1
			subUpper := func() (int, error) {
				if up >= 0 {
					return up, nil
				}
				u, err := upperOf()
				if err != nil {
					return -1, err
				}
				if err := unix.Mkdirat(u, name, 0o700); err != nil && err != unix.EEXIST {
					return -1, err
				}
				fd, err := unix.Openat(u, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					return -1, err
				}
				unix.Fchmod(fd, st.Mode&0o7777)
				up = fd
				return up, nil
			}
			if !mapped {
				subUpper()
			}
			c.entries(sub, subUpper, p, subNames)
			unix.Close(sub)
			if up >= 0 {
				unix.Close(up)
			}
		case unix.S_IFREG:
			if mapped {
				continue
			}
			if u, err := upperOf(); err == nil && copyFileAt(lower, u, name, st.Mode&0o7777) == nil {
				c.copied[p] = true
			}
		case unix.S_IFLNK:
			if mapped {
				continue
			}
			if u, err := upperOf(); err == nil {
				if target, err := readlinkAt(lower, name); err == nil {
					unix.Symlinkat(target, u, name)
				}
			}
		}
	}
}

// readNames lists directory fd, leaving its offset where it was.
func readNames(fd int) ([]string, error) {
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(d)
	return direntNames(d)
}

// direntNames lists the directory fd, freshly opened, from its offset on.
func direntNames(fd int) ([]string, error) {
	var names []string
	buf := make([]byte, 8<<10)
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// copyFileAt copies the regular file name of directory from to a new file
// of the same name in directory to.
func copyFileAt(from, to int, name string, mode uint32) error {
	src, err := unix.Openat(from, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	s := os.NewFile(uintptr(src), name)
	defer s.Close()
	dst, err := unix.Openat(to, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(dst), name)
	_, err = io.Copy(d, s)
	if err == nil {
		err = d.Chmod(os.FileMode(mode & 0o777))
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(to, name, 0)
	}
	return err
}

func readlinkAt(dir int, name string) (string, error) {
	b := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dir, name, b)
	if err != nil {
		return "", err
	}
	return string(b[:n]), nil
}

// idMap is the ranges of ids a user namespace maps, as seen inside it.
type idMap [][2]uint32 // first id, count

// ownIDMaps returns the id maps of the process's user namespace, which
// stays its own for its life, read once (Prepare reads them ahead).
var ownIDMaps = sync.OnceValues(func() (idMap, idMap) {
	return readIDMap("uid_map"), readIDMap("gid_map")
})

// readIDMap reads the calling process's /proc/self/uid_map or gid_map, or
// returns nil.
func readIDMap(name string) idMap {
	b, err := os.ReadFile("/proc/self/" + name)
	if err != nil {
		return nil
	}
	var m idMap
	for _, line := range strings.Split(string(b), "\n") {
		var inside, outside, count uint32
		if n, _ := fmt.Sscan(line, &inside, &outside, &count); n == 3 {
			m = append(m, [2]uint32{inside, count})
		}
	}
	return m
}

func (m idMap) has(id uint32) bool {
	for _, r := range m {
		if id >= r[0] && id-r[0] < r[1] {
			return true
		}
	}
	return false
}
