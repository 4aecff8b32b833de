package mounts

import (
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// mountPointsIn returns the destinations of p's MountPoint steps that lie
// directly in dir, each with the host source of its bind.
func mountPointsIn(p *Plan, dir string) map[string]string {
	out := map[string]string{}
	for _, m := range p.Mounts {
		if m.Kind == MountPoint && path.Dir(m.Path) == dir {
			out[path.Base(m.Path)] = m.Source
		}
	}
	return out
}

// shadow replaces dir of the new tree with a tmpfs that holds the same
// entries as before (each the same mounts: a recursive clone of the tree
// there, moved back in place; a symlink made again) and, for each name of
// points, an empty mount point of the type of its source. The tmpfs is then
// made read-only. Nothing is written to the host.
func shadow(dir string, points map[string]string) error {
	target := newRoot + dir
	if dir == "/" {
		target = newRoot
	}
	var st unix.Stat_t
	if err := unix.Stat(target, &st); err != nil {
		return fmt.Errorf("shadow %s: %w", dir, err)
	}
	entries, err := cloneEntries(target, points)
	defer closeEntries(entries)
	if err != nil {
		return fmt.Errorf("shadow %s: %w", dir, err)
	}
	opts := fmt.Sprintf("mode=%o", st.Mode&0o7777)
	if err := unix.Mount("tmpfs", target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("shadow %s: tmpfs: %w", dir, err)
	}
	for _, e := range entries {
		if err := e.restore(target); err != nil {
			return fmt.Errorf("shadow %s: %s: %w", dir, e.name, err)
		}
	}
	for name, src := range points {
		if err := makeMountPoint(oldRoot+src, target+"/"+name); err != nil {
			return fmt.Errorf("shadow %s: mount point %s: %w", dir, name, err)
		}
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(unix.AT_FDCWD, target, 0, attr); err != nil {
		return fmt.Errorf("shadow %s: mount_setattr read-only: %w", dir, err)
	}
	return nil
}

// shadowEntry is one entry of a shadowed directory: a detached clone of
// the tree at it, or the target of a symlink.
type shadowEntry struct {
	name string
	tree int // -1 for a symlink
	dir  bool
	link string
}

// cloneEntries clones every entry of dir except the names of skip.
func cloneEntries(dir string, skip map[string]string) ([]shadowEntry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []shadowEntry
	for _, de := range des {
		if _, ok := skip[de.Name()]; ok {
			continue
		}
		p := dir + "/" + de.Name()
		if de.Type()&os.ModeSymlink != 0 {
			link, err := os.Readlink(p)
			if err != nil {
				return out, err
			}
			out = append(out, shadowEntry{name: de.Name(), tree: -1, link: link})
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return out, fmt.Errorf("open_tree %s: %w", de.Name(), err)
		}
		out = append(out, shadowEntry{name: de.Name(), tree: fd, dir: de.IsDir()})
	}
	return out, nil
}

func closeEntries(es []shadowEntry) {
	for _, e := range es {
		if e.tree >= 0 {
			unix.Close(e.tree)
		}
	}
}

// restore puts e back into dir, the shadow tmpfs.
func (e shadowEntry) restore(dir string) error {
	p := dir + "/" + e.name
	switch {
	case e.tree < 0:
		return os.Symlink(e.link, p)
	case e.dir:
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
	default:
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
	}
	if err := unix.MoveMount(e.tree, "", unix.AT_FDCWD, p, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}
