package nsjail

import "syscall"

// uidMappings and gidMappings are the init's id maps. An unprivileged
// caller may map only its own ids. Root may map any, and maps every id to
// itself: overlayfs copies a file up keeping its owner and group, and fails
// with EOVERFLOW when either has no id in the namespace, so that with only
// root's own ids mapped a changeset could take no change to a file of
// another owner or of group, say, sudo. The command gains nothing from the
// wider maps: it holds no capability, and its own ids and groups do not
// change.
func uidMappings(euid, uid int) []syscall.SysProcIDMap { return idMappings(euid, uid) }

func gidMappings(euid, gid int) []syscall.SysProcIDMap { return idMappings(euid, gid) }

func idMappings(euid, id int) []syscall.SysProcIDMap {
	if euid == 0 {
		return []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
	}
	return []syscall.SysProcIDMap{{ContainerID: id, HostID: id, Size: 1}}
}
