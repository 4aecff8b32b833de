package mounts

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// A Guard keeps the plan's binds in place against what the host does to
// their paths. Since Linux 3.18 the kernel detaches a mount from every mount
// namespace when a process in another one unlinks or renames over the
// dentry it sits on: `git config` on the host renaming config.lock over a
// protected .git/config, an editor's atomic save of a read-only file, a
// rotated secret file that is hidden, a workspace deleted and made again.
// The path then shows whatever lies beneath in the sandbox: a writable
// parent, or the host's readable file.
//
// The guard records the mount id of every bind, read-only bind, hidden,
// protected and pinned path right after it is mounted. [Guard.Lost] says
// which no longer hold their path (the check of a sandbox built ahead, when
// a command takes it); [Guard.Restore] mounts them again onto whatever the
// path names now, the way they were mounted first.
//
// A path the host turned into a symlink cannot be covered (a mount cannot
// sit on one): Restore reports it, except for protected names and pins,
// which are skipped as ProtectNow skips them.
//
// Overlays are not restored: a changeset's workspace whose lower directory
// the host removed shows the read-only host tree beneath, which lifts no
// protection.
type Guard struct {
	held []held
	// cover is a detached clone of an empty, unreadable file, kept to
	// hide a file again; -1 when no hidden path was a file at build.
	cover int
}

type held struct {
	m  Mount
	id uint64 // 0: not mounted (missing when last looked at)
}

// guarded reports whether a mount of kind k sits on a host path that the
// host may replace, and is restored by a Guard.
func guarded(k Kind) bool {
	switch k {
	case Bind, BindReadOnly, Hide, Protect, Pin:
		return true
	}
	return false
}

// NewGuard records the binds Execute made: writable, read-only and hidden
// paths. Protected names and pins come later, with [Guard.HoldProtected].
//
// Preconditions: called right after Execute, by the same process.
func NewGuard(p *Plan) (*Guard, error) {
	g := &Guard{cover: -1}
	points := map[string]bool{}
	for _, m := range p.Mounts {
		// A persistent /tmp's mount point is the host's /tmp: restoring
		// it would bind whatever the host put there instead.
		points[m.Path] = points[m.Path] || m.Kind == MountPoint || m.Path == "/tmp" && m.Source != ""
	}
	for _, m := range p.Mounts {
		if !guarded(m.Kind) || m.Kind == Protect || m.Kind == Pin || m.MakeTarget || points[m.Path] {
			continue // mount points on the sandbox's own tmpfs are beyond the host's reach
		}
		id, err := mountID(m.Path)
		if err != nil {
			return nil, &Error{Kind: m.Kind, Path: m.Path, Err: err}
		}
		g.held = append(g.held, held{m: m, id: id})
		if m.Kind == Hide && g.cover < 0 {
			g.cover = fileCover(m.Path)
		}
	}
	return g, nil
}

// fileCover clones the hidden file at p, an empty file nobody may read, to
// serve as the cover of a file hidden again: each one is a clone of this
// detached clone, which nothing but the guard can reach. -1 when p is a
// directory, or when the kernel cannot clone a detached mount (before
// 6.15): files are then covered with an unopenable /dev/null (nullCover).
func fileCover(p string) int {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return -1
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return -1
	}
	probe, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		unix.Close(fd)
		return -1
	}
	unix.Close(probe)
	return fd
}

// HoldProtected records the protected names and pins that ProtectNow
// mounted (those that existed and were not symlinks), and the further
// paths bound read-only onto themselves when the command started (the
// protected entries of the writable roots), as protected names.
func (g *Guard) HoldProtected(p *Plan, readOnly []string) {
	ms := slices.Clone(p.Mounts)
	for _, r := range readOnly {
		ms = append(ms, Mount{Kind: Protect, Path: r})
	}
	for _, m := range ms {
		if m.Kind != Protect && m.Kind != Pin {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(m.Path, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			continue
		}
		if id, err := mountID(m.Path); err == nil {
			g.held = append(g.held, held{m: m, id: id})
		}
	}
	// Back in plan order (depth, then kind), so that a parent is restored
	// before what lies beneath it.
	slices.SortStableFunc(g.held, func(a, b held) int {
		if d := depth(a.m.Path) - depth(b.m.Path); d != 0 {
			return d
		}
		return int(a.m.Kind) - int(b.m.Kind)
	})
}

// Ancestors returns every directory above the recorded mounts' paths. A
// name moved away from one of them (the path itself, or a directory above
// it) takes the mount along without any change to the mount table, so a
// watch on the mount table alone misses it: the caller watches these too.
func (g *Guard) Ancestors() []string {
	var out []string
	for _, h := range g.held {
		for d := path.Dir(h.m.Path); ; d = path.Dir(d) {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
			if d == "/" {
				break
			}
		}
	}
	return out
}

// Lost returns the recorded mounts that no longer hold their path.
func (g *Guard) Lost() []Mount {
	var out []Mount
	for _, h := range g.held {
		if id, err := mountID(h.m.Path); err != nil || id != h.id {
			out = append(out, h.m)
		}
	}
	return out
}

// Restore mounts every lost bind again onto what its path names now, in
// plan order. A path that does not exist at the moment stays lost; Restore
// returns the nearest existing directory above each, for the caller to
// watch for the name to come back. An error means a protection is lifted
// and could not be put back.
func (g *Guard) Restore() (watch []string, err error) {
	for range restorePasses {
		watch, err = g.restorePass()
		if !errors.Is(err, errReplaced) && !errors.Is(err, unix.ENOSPC) {
			return watch, err
		}
		if errors.Is(err, unix.ENOSPC) {
			// Each detached tree counts as a mount namespace until the
			// kernel frees it, after an RCU grace period: a burst of
			// restores may find the sandbox's limit reached for a moment.
			time.Sleep(time.Millisecond)
		}
	}
	return watch, err
}

// restorePass goes over the held mounts once, in plan order.
func (g *Guard) restorePass() (watch []string, err error) {
	for i := range g.held {
		h := &g.held[i]
		if id, err := mountID(h.m.Path); err == nil && id == h.id {
			continue
		}
		id, err := g.restore(h.m)
		switch {
		case err == nil:
			h.id = id
		case missing(err):
			h.id = 0
			watch = append(watch, existingAbove(h.m.Path))
		case errors.Is(err, errSymlink) && (h.m.Kind == Protect || h.m.Kind == Pin):
			h.id = 0 // as when the command starts: a symlink is protected by its target's rules
		default:
			return watch, &Error{Kind: h.m.Kind, Path: h.m.Path, Err: err}
		}
	}
	return watch, nil
}

// existingAbove returns the nearest directory above p that exists.
func existingAbove(p string) string {
	for d := path.Dir(p); ; d = path.Dir(d) {
		var st unix.Stat_t
		if unix.Stat(d, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR || d == "/" {
			return d
		}
	}
}

var (
	errSymlink  = errors.New("replaced by a symlink")
	errReplaced = errors.New("replaced again while being restored")
)

// restorePasses bounds how often Restore goes over the mounts when a name
// keeps being replaced while it restores it.
const restorePasses = 64

// restore mounts m again onto the file its path names now, opened without
// following a symlink and mounted through that descriptor: a command
// swapping the name meanwhile can make the mount land on its own file,
// never on another path.
func (g *Guard) restore(m Mount) (uint64, error) {
	fd, err := unix.Open(m.Path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return 0, errSymlink
	}
	tree, err := g.tree(m, fd, st.Mode&unix.S_IFMT == unix.S_IFDIR)
	if err != nil {
		return 0, err
	}
	defer unix.Close(tree)
	err = unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	if err == unix.ENOENT {
		return 0, errReplaced // the name was replaced again meanwhile
	}
	if err != nil {
		return 0, fmt.Errorf("move_mount: %w", err)
	}
	return fdMountID(tree)
}

// tree makes the detached mount that m puts onto the file fd: a clone of
// that file with m's flags, or a fresh cover for a hidden path.
func (g *Guard) tree(m Mount, fd int, dir bool) (int, error) {
	if m.Kind == Hide {
		return g.hideTree(dir)
	}
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
	if err != nil {
		return -1, fmt.Errorf("open_tree: %w", err)
	}
	var attr unix.MountAttr
	flags := unix.AT_EMPTY_PATH | unix.AT_RECURSIVE
	switch m.Kind {
	case BindReadOnly, Protect:
		attr.Attr_set = unix.MOUNT_ATTR_RDONLY
	case Bind:
		// The host's new directory shows through the read-only root:
		// writable again, as the bind made it, but only at its top.
		attr.Attr_clr = unix.MOUNT_ATTR_RDONLY
		flags = unix.AT_EMPTY_PATH
	default:
		return tree, nil
	}
	if err := unix.MountSetattr(tree, "", uint(flags), &attr); err != nil {
		unix.Close(tree)
		return -1, fmt.Errorf("mount_setattr: %w", err)
	}
	return tree, nil
}

// hideTree returns a detached cover: an empty read-only tmpfs nobody may
// list for a directory, a clone of the empty file for anything else.
func (g *Guard) hideTree(dir bool) (int, error) {
	if !dir {
		if g.cover < 0 {
			return nullCover()
		}
		return unix.OpenTree(g.cover, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	}
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("fsopen: %w", err)
	}
	defer unix.Close(fs)
	for _, kv := range [][2]string{{"mode", "000"}, {"size", "4k"}} {
		if err := unix.FsconfigSetString(fs, kv[0], kv[1]); err != nil {
			return -1, fmt.Errorf("fsconfig %s: %w", kv[0], err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return -1, fmt.Errorf("fsconfig create: %w", err)
	}
	attrs := unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC
	return unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, attrs)
}

// nullCover covers a file when there is no empty file to clone (no hidden
// path was a file at build, or the kernel cannot clone a detached mount):
// the sandbox's /dev/null, which the host cannot reach, on a mount that
// allows no device, so that opening it fails with EACCES.
func nullCover() (int, error) {
	tree, err := unix.OpenTree(unix.AT_FDCWD, "/dev/null", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("open_tree /dev/null: %w", err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		unix.Close(tree)
		return -1, fmt.Errorf("mount_setattr: %w", err)
	}
	return tree, nil
}

// mountID returns the id of the mount that p (not following a final
// symlink) lies on: the unique id where the kernel has one (6.8), never
// reused, else the ordinary one.
func mountID(p string) (uint64, error) {
	return statxMountID(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW)
}

func fdMountID(fd int) (uint64, error) {
	return statxMountID(fd, "", unix.AT_EMPTY_PATH)
}

func statxMountID(dirfd int, p string, flags int) (uint64, error) {
	var st unix.Statx_t
	err := unix.Statx(dirfd, p, flags|unix.AT_STATX_DONT_SYNC, unix.STATX_MNT_ID|unix.STATX_MNT_ID_UNIQUE, &st)
	if err != nil {
		return 0, err
	}
	if st.Mask&(unix.STATX_MNT_ID|unix.STATX_MNT_ID_UNIQUE) == 0 {
		return 0, errors.New("statx reports no mount id (Linux 5.8 or later needed)")
	}
	return st.Mnt_id, nil
}
