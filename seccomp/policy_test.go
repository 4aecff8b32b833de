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
		assert.Contains(t, []syscall.Errno{syscall.EPERM, syscall.ENOSYS, syscall.EAFNOSUPPORT, syscall.EPROTONOSUPPORT}, r.Errno, r.Syscall)
	}
}

func TestPolicyErrnos(t *testing.T) {
	for _, r := range Policy(Options{}) {
		want := syscall.EPERM
		switch {
		case r.Syscall == "socketpair" && r.Arg.Value == afUnix:
			want = syscall.EPERM // a unix datagram pair: refused as a unix socket is
		case r.And != nil:
			want = syscall.EPROTONOSUPPORT // netlink: as from a kernel without the protocol
		case r.Syscall == "clone3":
			want = syscall.ENOSYS // libc falls back to clone only on ENOSYS
		case (r.Syscall == "socket" || r.Syscall == "socketpair") && r.Arg.Value != afUnix:
			want = syscall.EAFNOSUPPORT // as from a kernel without the family
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
		{"unix sockets", Options{AllowUnixSockets: true}, nil, nil, 0},
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
				if r.Syscall == "socket" && r.Errno == syscall.EPERM {
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
		if assert.NotNil(t, r.Arg, r.Syscall) && r.Arg.Value < 1<<familyBits {
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

// refused reports whether rs refuse call with arg0 = v, and with what.
func refused(rs []Rule, call string, v uint64) (syscall.Errno, bool) {
	for _, r := range rs {
		if r.Syscall == call && r.Arg != nil && r.And == nil && r.Arg.Index == 0 && v&r.Arg.Mask == r.Arg.Value {
			return r.Errno, true
		}
	}
	return 0, false
}

func TestPolicySocketFamilies(t *testing.T) {
	const (
		afPacket    = 17
		afBluetooth = 31
		afAlg       = 38
		afVsock     = 40
		afXdp       = 44
	)
	cases := []struct {
		o       Options
		allowed []uint64
	}{
		{Options{}, []uint64{afInet, afInet6, afNetlink}},
		{Options{AllowUnixSockets: true}, []uint64{afUnix, afInet, afInet6, afNetlink}},
		{Options{AllowUnixSockets: true, DenyInet: true}, []uint64{afUnix, afNetlink}},
	}
	for _, c := range cases {
		rs := Policy(c.o)
		for _, af := range c.allowed {
			_, ok := refused(rs, "socket", af)
			assert.False(t, ok, "%s: family %d", c.o.name(), af)
		}
		for _, af := range []uint64{afPacket, afBluetooth, afAlg, afVsock, afXdp, 45, 46, 63, 64, 1000, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff} {
			for _, call := range []string{"socket", "socketpair"} {
				errno, ok := refused(rs, call, af)
				assert.True(t, ok, "%s: %s family %d", c.o.name(), call, af)
				assert.Equal(t, syscall.EAFNOSUPPORT, errno, "%s: %s family %d", c.o.name(), call, af)
			}
		}
		_, ok := refused(rs, "socketpair", afUnix)
		assert.False(t, ok, "unix stream and seqpacket pairs are always allowed")
	}
}

func TestPolicyNetlinkRouteOnly(t *testing.T) {
	const (
		netlinkRoute         = 0
		netlinkSockDiag      = 4
		netlinkAudit         = 9
		netlinkKobjectUevent = 15
		netlinkGeneric       = 16
	)
	refusedProtocol := func(rs []Rule, family, protocol uint64) bool {
		for _, r := range rs {
			if r.Syscall == "socket" && r.And != nil && family&r.Arg.Mask == r.Arg.Value && protocol&r.And.Mask == r.And.Value {
				assert.Equal(t, syscall.EPROTONOSUPPORT, r.Errno)
				return true
			}
		}
		return false
	}
	rs := Policy(Options{})
	assert.False(t, refusedProtocol(rs, afNetlink, netlinkRoute), "route")
	for _, p := range []uint64{netlinkSockDiag, netlinkAudit, netlinkKobjectUevent, netlinkGeneric, 31, 32, 0x8000_0000} {
		assert.True(t, refusedProtocol(rs, afNetlink, p), "netlink protocol %d", p)
	}
	assert.False(t, refusedProtocol(rs, afInet, 17), "other families' protocols are not netlink's")
}
