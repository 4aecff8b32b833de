package nsjail

import "syscall"

// gidMappings is the init's group map. An unprivileged caller may map only
// its own group. Root may map any, and maps every group to itself:
// overlayfs copies a file up keeping its group, and fails with EOVERFLOW
// when that group has no id in the namespace, so that with only root's own
// group mapped a changeset could not take a change to a file of group,
// say, sudo. The command gains nothing from the wider map: it holds no
// capability, and its own groups do not change.
func gidMappings(euid, gid int) []syscall.SysProcIDMap {
	if euid == 0 {
		return []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
	}
	return []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
}
