package nsjail

import (
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUserNSReason(t *testing.T) {
	cases := []struct {
		name     string
		errno    syscall.Errno
		values   map[string]string
		filtered bool
		want     string
	}{
		{"debian knob", syscall.EPERM, map[string]string{"kernel.unprivileged_userns_clone": "0"}, false,
			"user namespaces disabled: kernel.unprivileged_userns_clone=0"},
		{"no namespaces allowed", syscall.ENOSPC, map[string]string{"user.max_user_namespaces": "0"}, false,
			"user namespaces disabled: user.max_user_namespaces=0"},
		{"ubuntu apparmor", 0, map[string]string{"kernel.apparmor_restrict_unprivileged_userns": "1", "user.max_user_namespaces": "100"}, false,
			"user namespaces disabled: kernel.apparmor_restrict_unprivileged_userns=1"},
		{"container", syscall.EPERM, map[string]string{"user.max_user_namespaces": "100"}, true,
			"clone(CLONE_NEWUSER) refused: this process runs under a seccomp filter (a container's?)"},
		{"limit", syscall.ENOSPC, nil, false, "user namespace limit reached (user.max_user_namespaces)"},
		{"no kernel support", syscall.EINVAL, nil, false, "kernel built without user namespaces (CONFIG_USER_NS)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, userNSReason(c.errno, "raw", c.values, c.filtered))
		})
	}
}

func TestProcReason(t *testing.T) {
	docker := `22 21 0:20 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
23 22 0:21 / /proc/kcore rw,nosuid - tmpfs tmpfs rw
`
	host := `22 21 0:20 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
24 22 0:22 / /proc/sys/fs/binfmt_misc rw,relatime - autofs systemd-1 rw
`
	assert.Equal(t, "proc mount refused (masked /proc in a container: /proc/kcore is covered)",
		procReason(syscall.EPERM, "raw", strings.NewReader(docker)))
	assert.Equal(t, "proc mount refused: operation not permitted", procReason(syscall.EPERM, "raw", strings.NewReader(host)))
	assert.Equal(t, "raw", procReason(syscall.EINVAL, "raw", strings.NewReader(docker)))
}

func TestNamespacesLikely(t *testing.T) {
	all := func(string) bool { return true }
	clean := "22 21 0:20 / /proc rw - proc proc rw\n"
	masked := clean + "23 22 0:21 / /proc/kcore rw - tmpfs tmpfs rw\n"
	open := map[string]string{"user.max_user_namespaces": "1000"}
	cases := []struct {
		name     string
		hasNS    func(string) bool
		values   map[string]string
		filtered bool
		mi       string
		want     bool
	}{
		{"ordinary host", all, open, false, clean, true},
		{"no user namespaces in the kernel", func(ns string) bool { return ns != "user" }, open, false, clean, false},
		{"no cgroup namespaces in the kernel", func(ns string) bool { return ns != "cgroup" }, open, false, clean, false},
		{"switched off", all, map[string]string{"kernel.unprivileged_userns_clone": "0"}, false, clean, false},
		{"apparmor", all, map[string]string{"kernel.apparmor_restrict_unprivileged_userns": "1"}, false, clean, false},
		{"container filter", all, open, true, clean, false},
		{"masked proc", all, open, false, masked, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, namespacesLikely(c.hasNS, c.values, c.filtered, strings.NewReader(c.mi)))
		})
	}
}
