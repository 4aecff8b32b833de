package seccomp

import (
	"slices"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func names(rs []Rule) []string {
	var out []string
	for _, r := range rs {
		if !slices.Contains(out, r.Syscall) {
			out = append(out, r.Syscall)
		}
	}
	return out
}

func TestPolicyDeniesTheListedCalls(t *testing.T) {
	want := []string{
		"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
		"fsmount", "fspick", "mount_setattr", "unshare", "setns", "clone", "clone3", "keyctl", "add_key",
		"request_key", "bpf", "perf_event_open", "kexec_load", "kexec_file_load", "init_module",
		"finit_module", "delete_module", "open_by_handle_at", "userfaultfd", "process_vm_readv",
		"process_vm_writev", "ptrace", "io_uring_setup", "io_uring_enter", "io_uring_register", "acct",
		"swapon", "swapoff", "reboot", "syslog", "quotactl", "settimeofday", "clock_settime", "adjtimex",
		"ioctl", "socket",
	}
	got := names(Policy(Options{}))
	for _, n := range want {
		assert.Contains(t, got, n)
	}
}

func TestPolicyRulesAreExplained(t *testing.T) {
	for _, r := range Policy(Options{DenyInet: true}) {
		assert.NotEmpty(t, r.Reason, r.Syscall)
		assert.Contains(t, []syscall.Errno{syscall.EPERM, syscall.ENOSYS}, r.Errno, r.Syscall)
	}
}

func TestPolicyErrnos(t *testing.T) {
	for _, r := range Policy(Options{}) {
		want := syscall.EPERM
		if r.Syscall == "clone3" {
			want = syscall.ENOSYS // libc falls back to clone only on ENOSYS
		}
		assert.Equal(t, want, r.Errno, r.Syscall)
	}
}

func TestPolicyOptions(t *testing.T) {
	cases := []struct {
		name    string
		o       Options
		has     []string
		hasNot  []string
		sockets int
	}{
		{"default", Options{}, []string{"ptrace", "pidfd_getfd"}, nil, 1},
		{"ptrace", Options{AllowPtrace: true}, nil, []string{"ptrace", "pidfd_getfd"}, 1},
		{"unix sockets", Options{AllowUnixSockets: true}, nil, []string{"socket"}, 0},
		{"no inet", Options{AllowUnixSockets: true, DenyInet: true}, []string{"socket"}, nil, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := Policy(c.o)
			for _, n := range c.has {
				assert.Contains(t, names(rs), n)
			}
			for _, n := range c.hasNot {
				assert.NotContains(t, names(rs), n)
			}
			n := 0
			for _, r := range rs {
				if r.Syscall == "socket" {
					n++
				}
			}
			assert.Equal(t, c.sockets, n)
		})
	}
}

func TestPolicyMatchesLow32BitsOfIoctlsAndFamilies(t *testing.T) {
	for _, r := range Policy(Options{DenyInet: true}) {
		if r.Syscall != "ioctl" && r.Syscall != "socket" {
			continue
		}
		if assert.NotNil(t, r.Arg, r.Syscall) {
			assert.Equal(t, uint64(0xffffffff), r.Arg.Mask, "%s: high bits must be ignored, as the kernel ignores them", r.Syscall)
		}
	}
	var cmds []uint64
	for _, r := range Policy(Options{}) {
		if r.Syscall == "ioctl" {
			cmds = append(cmds, r.Arg.Value)
		}
	}
	assert.ElementsMatch(t, []uint64{tiocsti, tioclinux}, cmds)
}

func TestPolicyCloneChecksEveryNamespaceFlag(t *testing.T) {
	var flags uint64
	for _, r := range Policy(Options{}) {
		if r.Syscall == "clone" {
			assert.Equal(t, r.Arg.Mask, r.Arg.Value, "any one flag set matches")
			flags |= r.Arg.Value
		}
	}
	want := uint64(cloneNewNS | cloneNewCgroup | cloneNewUTS | cloneNewIPC | cloneNewUser | cloneNewPID | cloneNewNet)
	assert.Equal(t, want, flags)
}
