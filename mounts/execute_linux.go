package mounts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// During Execute the host's tree is at oldRoot and the sandbox's is built
// at newRoot, both inside a scratch tmpfs that is discarded by the final
// pivot.
const (
	scratch   = "/tmp" // where the scratch tmpfs goes; any existing directory would do
	newRoot   = "/newroot"
	oldRoot   = "/oldroot"
	emptyFile = "/empty"
)

// Error reports the mount step that failed.
type Error struct {
	Kind Kind
	Path string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("%s %s: %v", e.Kind, e.Path, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// Execute builds the plan's tree and makes it the calling process's root.
//
// Preconditions: the process is alone in new user and mount namespaces and
// holds CAP_SYS_ADMIN in them; its cwd and root are changed.
func Execute(p *Plan) error {
	if err := enterScratch(); err != nil {
		return &Error{Kind: RootReadOnly, Path: "/", Err: err}
	}
	shadowed := map[string]bool{}
	for _, m := range p.Mounts {
		err := apply(m)
		if m.Kind == MountPoint && !shadowed[path.Dir(m.Path)] {
			shadowed[path.Dir(m.Path)] = true
			err = shadow(path.Dir(m.Path), mountPointsIn(p, path.Dir(m.Path)))
		}
		if err != nil {
			return &Error{Kind: m.Kind, Path: m.Path, Err: err}
		}
	}
	if err := seal(); err != nil {
		return &Error{Kind: Dev, Path: "/dev", Err: err}
	}
	if err := pivotInto(newRoot); err != nil {
		return &Error{Kind: RootReadOnly, Path: "/", Err: fmt.Errorf("pivot_root: %w", err)}
	}
	return nil
}

// enterScratch cuts the namespace's mounts off from the host's in both
// directions, then pivots into a fresh tmpfs with the host's tree beneath
// it at oldRoot.
//
// Private, not a slave: a slave's copies, and every bind made from them,
// take each mount the host makes later (removable media under /media, an
// sshfs or rclone mount, a new login's /run/user/UID, anything under a
// shared / on systemd hosts), writable by the kernel's rules under a path
// the sandbox shows read-only, and a sandbox built ahead lives long. The
// host's renames and deletes over a mount point still detach the copy
// here (the kernel detaches the mounts on a dentry in every namespace,
// whatever the propagation), which is what the durable-mount watch waits
// for. The cost: a filesystem the host unmounts after the sandbox was
// built stays mounted here, busy, until the sandbox ends.
func enterScratch() error {
	if err := unix.Mount("", "/", "", unix.MS_PRIVATE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	if err := unix.Mount("tmpfs", scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		return fmt.Errorf("scratch tmpfs: %w", err)
	}
	for _, d := range []string{scratch + newRoot, scratch + oldRoot} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	if err := createFile(scratch+emptyFile, 0); err != nil {
		return err
	}
	if err := unix.PivotRoot(scratch, scratch+oldRoot); err != nil {
		return fmt.Errorf("pivot_root to scratch: %w", err)
	}
	return unix.Chdir("/")
}

func apply(m Mount) error {
	target := newRoot + m.Path
	if m.Path == "/" {
		target = newRoot
	}
	switch m.Kind {
	case RootReadOnly:
		if err := unix.Mount(oldRoot, newRoot, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		return setReadOnly(newRoot, unix.MOUNT_ATTR_NOSUID)
	case Proc:
		return unix.Mount("proc", target, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	case Dev:
		return buildDev(target, m.Size)
	case Tmpfs:
		return unix.Mount("tmpfs", target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, tmpfsData(m.Size))
	case Bind, BindReadOnly:
		src := m.Path
		if m.Source != "" {
			src = m.Source
		}
		return bind(oldRoot+src, target, m.Kind == BindReadOnly, m.MakeTarget)
	case MountPoint:
		return nil // made by shadow, once per directory
	case Overlay:
		return mountOverlay(m, target)
	case Protect, Pin:
		return nil // done by ProtectNow, when the command starts
	case Hide:
		src := m.Path
		if m.Source != "" {
			src = m.Source
		}
		return hide(oldRoot+src, target)
	}
	return fmt.Errorf("unknown mount kind %v", m.Kind)
}

// ProtectNow makes the plan's protected paths read-only in the current root,
// and pins the directories that lead to them. It runs when a command starts
// rather than when the tree is built, so a path created since (a `git init`
// by the previous command, say) is covered even in a sandbox built ahead of
// time. Each path is bound onto itself: inside a writable root that is the
// host's own file. Pins come first (the plan orders them by depth), so each
// protected path's mount ends up on top.
//
// Preconditions: called after Execute, by the same process, before any
// privilege is dropped.
func ProtectNow(p *Plan) error {
	for _, m := range p.Mounts {
		if m.Kind != Protect && m.Kind != Pin {
			continue
		}
		fi, err := os.Lstat(m.Path)
		if missing(err) || err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			continue // nothing to protect; a symlink is protected by its target's rules
		}
		if err == nil {
			err = bind(m.Path, m.Path, m.Kind == Protect, false)
		}
		if err != nil {
			return &Error{Kind: m.Kind, Path: m.Path, Err: err}
		}
	}
	return nil
}

// missing reports whether err says a path does not exist. ENOTDIR counts:
// a writable root may be a file, and nothing lies beneath a file.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR)
}

func bind(src, target string, readOnly, makeTarget bool) error {
	if makeTarget {
		if err := makeMountPoint(src, target); err != nil {
			return err
		}
	}
	if err := unix.Mount(src, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	if readOnly {
		return setReadOnly(target, 0)
	}
	return nil
}

// setReadOnly makes target and every mount beneath it read-only in one call,
// keeping any flags the host locked.
func setReadOnly(target string, extra uint64) error {
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | extra}
	if err := unix.MountSetattr(unix.AT_FDCWD, target, unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("mount_setattr read-only: %w", err)
	}
	return nil
}

// makeMountPoint creates target with the type of src: a directory, or an
// empty file for anything else.
func makeMountPoint(src, target string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return os.MkdirAll(target, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return createFile(target, 0o644)
}

// createFile makes sure the file path exists, creating it empty with mode
// perm. It uses plain system calls: the first os.File a Go program opens
// starts the runtime's network poller, which the init needs for nothing
// else while it builds the sandbox.
func createFile(path string, perm uint32) error {
	for {
		fd, err := unix.Open(path, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, perm)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "open", Path: path, Err: err}
		}
		return unix.Close(fd)
	}
}

// tmpfsData is the options of a private, world-writable tmpfs of size
// bytes, or of the kernel's default size (half of the host's memory).
func tmpfsData(size int64) string {
	if size <= 0 {
		return "mode=1777"
	}
	return "mode=1777,size=" + strconv.FormatInt(size, 10)
}

// hide covers target with an empty read-only directory or file that nobody
// may read, list or chmod.
func hide(src, target string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return unix.Mount("tmpfs", target, "tmpfs",
			unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=000,size=4k")
	}
	return bind(emptyFile, target, true, false)
}

// buildDev mounts a minimal /dev: a few device nodes bound from the host, a
// private devpts instance, a private /dev/shm and the usual links.
func buildDev(dev string, shmSize int64) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return err
	}
	for _, name := range devices {
		if err := bind(oldRoot+"/dev/"+name, dev+"/"+name, false, true); err != nil {
			return fmt.Errorf("/dev/%s: %w", name, err)
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(dev+"/"+d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", dev+"/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC,
		"newinstance,ptmxmode=0666,mode=620"); err != nil {
		return fmt.Errorf("devpts: %w", err)
	}
	if err := unix.Mount("tmpfs", dev+"/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, tmpfsData(shmSize)); err != nil {
		return fmt.Errorf("/dev/shm: %w", err)
	}
	links := [][2]string{
		{"pts/ptmx", "ptmx"}, {"/proc/self/fd", "fd"},
		{"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
	}
	for _, l := range links {
		if err := os.Symlink(l[0], dev+"/"+l[1]); err != nil {
			return err
		}
	}
	return nil
}

// seal makes the sandbox's /dev directory read-only once everything that
// needs a mount point in it exists; the device nodes and /dev/shm stay
// writable.
func seal() error {
	return unix.Mount("", newRoot+"/dev", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, "")
}

// pivotInto makes dir the root and detaches everything else, including the
// host's tree, without needing a directory for the old root.
func pivotInto(dir string) error {
	if err := unix.Chdir(dir); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return err
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	return unix.Chdir("/")
}
