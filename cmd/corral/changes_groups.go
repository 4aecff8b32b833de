package main

import (
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"

	"github.com/corralhq/corral/changeset"
)

// maxUnmappedShown bounds the files warnUnmapped names one by one.
const maxUnmappedShown = 5

// warnUnmapped names, before the command runs, the files of the changeset's
// directories the command will not be able to change: an unprivileged
// sandbox maps only the user's own group, and overlayfs cannot copy up a
// file of another one (the command would see only "Value too large for
// defined data type"). Root maps every group and has nothing to warn about.
func warnUnmapped(w io.Writer, dir string) {
	if dir == "" || os.Geteuid() == 0 {
		return
	}
	cs, err := changeset.Open(dir)
	if err != nil {
		return // corral.New reports what is wrong with it
	}
	gid := uint32(os.Getgid())
	found, total, err := cs.UnmappedGroups(uint32(os.Getuid()), func(g uint32) bool { return g == gid }, maxUnmappedShown)
	if err != nil {
		return
	}
	for _, u := range found {
		fmt.Fprintf(w, "corral: cannot change %s in the changeset: its group %s is not mapped in the sandbox\n",
			changeset.Quote(u.RealPath()), groupText(u.GID))
	}
	if total > len(found) {
		fmt.Fprintf(w, "corral: and %d more files whose group is not mapped in the sandbox\n", total-len(found))
	}
	if total > 0 {
		fmt.Fprintf(w, "corral: an unprivileged sandbox maps only your own group %s; change their group (chgrp) or run as root to change them\n",
			groupText(gid))
	}
}

// groupText is a group id with its name, as "27 (sudo)".
func groupText(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return id + " (" + changeset.Quote(g.Name) + ")"
	}
	return id
}
