package nsjail

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"syscall"
)

// sysctls are the knobs that switch unprivileged user namespaces off, in
// the order they are checked, with the value that means "off".
var sysctls = []struct{ name, off string }{
	{"kernel.unprivileged_userns_clone", "0"},
	{"user.max_user_namespaces", "0"},
	{"kernel.apparmor_restrict_unprivileged_userns", "1"},
}

// userNSReason explains why clone(CLONE_NEWUSER) failed with errno, or why
// the namespace it made grants nothing (errno 0). values holds the sysctls
// that exist on this host; filtered says the probing process itself runs
// under a seccomp filter, as in most containers.
func userNSReason(errno syscall.Errno, msg string, values map[string]string, filtered bool) string {
	for _, s := range sysctls {
		if v, ok := values[s.name]; ok && v == s.off {
			return fmt.Sprintf("user namespaces disabled: %s=%s", s.name, v)
		}
	}
	switch {
	case errno == syscall.ENOSPC:
		return "user namespace limit reached (user.max_user_namespaces)"
	case errno == syscall.EPERM && filtered:
		return "clone(CLONE_NEWUSER) refused: this process runs under a seccomp filter (a container's?)"
	case errno == syscall.EPERM:
		return "clone(CLONE_NEWUSER) refused: operation not permitted"
	case errno == syscall.EINVAL:
		return "kernel built without user namespaces (CONFIG_USER_NS)"
	}
	return msg
}

// procReason explains why mounting a fresh proc failed. The kernel refuses
// it when the visible /proc has parts covered, as container runtimes do to
// mask /proc/kcore and friends.
func procReason(errno syscall.Errno, msg string, mountinfo io.Reader) string {
	if errno == syscall.EPERM {
		if covered, _ := procCovered(mountinfo); covered != "" {
			return "proc mount refused (masked /proc in a container: " + covered + " is covered)"
		}
		return "proc mount refused: operation not permitted"
	}
	return msg
}

// procCovered returns the first mount point beneath /proc in a
// /proc/self/mountinfo listing, other than binfmt_misc, which hosts mount
// there without masking anything.
func procCovered(mountinfo io.Reader) (string, error) {
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		mp := f[4]
		if strings.HasPrefix(mp, "/proc/") && mp != "/proc/sys/fs/binfmt_misc" {
			return mp, nil
		}
	}
	return "", sc.Err()
}

// namespacesLikely reports whether nothing the kernel exposes argues against
// the namespace layers: the kernel has each kind (hasNS), no sysctl switches
// user namespaces off, no seccomp filter sits on the process (filtered), and
// no mount covers part of /proc, which would refuse a fresh one.
func namespacesLikely(hasNS func(string) bool, values map[string]string, filtered bool, mountinfo io.Reader) bool {
	for _, ns := range []string{"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"} {
		if !hasNS(ns) {
			return false
		}
	}
	for _, s := range sysctls {
		if values[s.name] == s.off {
			return false
		}
	}
	if filtered {
		return false
	}
	covered, err := procCovered(mountinfo)
	return err == nil && covered == ""
}
