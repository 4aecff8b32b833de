package changeset

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"strconv"
)

// maxCopyUp bounds the originals CopyUpUnmapped copies; maxUnmappedNamed
// the ones it names when they cannot be copied.
const (
	maxCopyUp        = 10000
	maxUnmappedNamed = 5
)

// CopyUpUnmapped makes the user's originals of a group an unprivileged
// sandbox cannot map changeable: overlayfs would have to give their copies
// that group inside the user namespace, which has no id for it, and the
// command would see only EOVERFLOW ("Value too large for defined data
// type"). The caller, on the host, may give a copy any of the user's
// groups, so it copies them up itself ([Changeset.CopyUp]) before any
// sandbox mounts the changeset. What it cannot copy (a group that is not
// the user's, more than maxCopyUp files) is named through logf. Root maps
// every group and needs none of this. The error is the lock's or the
// search's; a copy that fails is only named.
func (c *Changeset) CopyUpUnmapped(logf func(string, ...any)) error {
	if os.Geteuid() == 0 {
		return nil
	}
	unlock, err := c.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	gid := uint32(os.Getgid())
	found, total, err := c.UnmappedGroups(uint32(os.Getuid()), func(g uint32) bool { return g == gid }, maxCopyUp)
	if err != nil {
		return err
	}
	failed := total - len(found)
	for _, u := range found {
		err := c.CopyUp(u)
		if err == nil {
			continue
		}
		if failed++; failed <= maxUnmappedNamed && logf != nil {
			reason := "its group " + groupText(u.GID) + " is not mapped in the sandbox and not one of yours"
			if !errors.Is(err, fs.ErrPermission) {
				reason = err.Error()
			}
			logf("corral: cannot change %s in the changeset: %s", Quote(u.RealPath()), reason)
		}
	}
	if failed > maxUnmappedNamed && logf != nil {
		logf("corral: and %d more files of the changeset cannot be changed: their group is not mapped in the sandbox", failed-maxUnmappedNamed)
	}
	if failed > 0 && logf != nil {
		logf("corral: an unprivileged sandbox maps only your own group %s; change their group (chgrp) or run as root to change them", groupText(gid))
	}
	return nil
}

// groupText is a group id with its name, as "27 (sudo)".
func groupText(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return id + " (" + Quote(g.Name) + ")"
	}
	return id
}
