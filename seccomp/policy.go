package seccomp

import (
	"errors"
	"slices"
	"syscall"
)

// Rule makes one system call, or the calls whose argument matches, fail
// with Errno.
type Rule struct {
	Syscall string
	Errno   syscall.Errno
	Arg     *Arg // nil: every call
	And     *Arg // a second argument that must match as well; nil: none
	Reason  string
}

// Arg matches a call when (argument Index & Mask) == Value.
type Arg struct {
	Index uint
	Mask  uint64
	Value uint64
}

// Options loosen or tighten the policy.
type Options struct {
	// AllowUnixSockets lets the command create AF_UNIX sockets.
	AllowUnixSockets bool
	// AllowPtrace lets the command trace its own processes (debuggers,
	// strace).
	AllowPtrace bool
	// DenyInet refuses IPv4 and IPv6 sockets: Network=none where there is no
	// network namespace to give the command an empty network.
	DenyInet bool
	// TCPOnly refuses every IPv4 and IPv6 socket but plain TCP (UDP, raw,
	// SCTP, MPTCP...): where Landlock's TCP rules are what limits a
	// command's network (Network=allow without a network namespace), the
	// sockets those rules do not cover would carry data out (DNS, QUIC).
	TCPOnly bool
}

// ErrUnavailable is returned by Compile when the filter compiler is not
// built in.
var ErrUnavailable = errors.New("seccomp filter compiler unavailable")

// mask32 compares only the low 32 bits: the kernel reads ioctl commands and
// socket families as 32-bit ints, so set high bits must not slip past an
// exact 64-bit match (CVE-2019-10063).
const mask32 = 0xffff_ffff

// Policy returns the rules for o.
func Policy(o Options) []Rule {
	var rs []Rule
	rs = append(rs, mountRules()...)
	rs = append(rs, namespaceRules()...)
	rs = append(rs, kernelRules()...)
	rs = append(rs, processRules(o.AllowPtrace)...)
	rs = append(rs, terminalRules()...)
	rs = append(rs, socketRules(o)...)
	rs = append(rs, signalRules()...)
	return rs
}

func deny(reason string, names ...string) []Rule {
	rs := make([]Rule, len(names))
	for i, n := range names {
		rs[i] = Rule{Syscall: n, Errno: syscall.EPERM, Reason: reason}
	}
	return rs
}

func mountRules() []Rule {
	return concat(
		deny("attaches filesystems, which could cover or reveal any path", "mount", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree", "move_mount"),
		deny("detaches mounts, uncovering what a mount hides", "umount2"),
		deny("changes mount flags such as read-only", "mount_setattr"),
		deny("changes the root directory, the first step of leaving it", "pivot_root", "chroot"),
	)
}

func namespaceRules() []Rule {
	rs := concat(
		deny("a new namespace hands the command a fresh set of capabilities", "unshare"),
		deny("joins another process's namespaces", "setns"),
	)
	for _, f := range cloneNamespaceFlags {
		rs = append(rs, Rule{
			Syscall: "clone", Errno: syscall.EPERM,
			Arg:    &Arg{Index: cloneFlagsArg(), Mask: f.flag, Value: f.flag},
			Reason: "clone into a new " + f.name + " namespace: no nested sandboxes",
		})
	}
	return append(rs, Rule{
		Syscall: "clone3", Errno: syscall.ENOSYS,
		Reason: "its flags live in memory a filter cannot read; ENOSYS makes libc fall back to clone",
	})
}

func kernelRules() []Rule {
	return concat(
		deny("the kernel keyring is shared with the caller's user: keys could be read or planted", "keyctl", "add_key", "request_key"),
		deny("loads programs into the kernel, a large attack surface", "bpf"),
		deny("observes other processes and the kernel: side channels", "perf_event_open"),
		deny("boots another kernel", "kexec_load", "kexec_file_load"),
		deny("loads or unloads kernel modules", "init_module", "finit_module", "delete_module"),
		deny("runs system calls out of this filter's sight and is a frequent source of kernel bugs", "io_uring_setup", "io_uring_enter", "io_uring_register"),
		deny("stalls kernel page faults at will, a staple of kernel exploits", "userfaultfd"),
		deny("writes process accounting to a file of the caller's choice", "acct"),
		deny("adds or removes swap", "swapon", "swapoff"),
		deny("reboots or halts the machine", "reboot"),
		deny("reads the kernel log, which leaks addresses and others' activity", "syslog"),
		deny("changes disk quotas", "quotactl", "quotactl_fd"),
		deny("sets the system clock", "settimeofday", "clock_settime", "adjtimex", "clock_adjtime"),
	)
}

func processRules(allowPtrace bool) []Rule {
	rs := concat(
		deny("opens files by handle, bypassing paths and mounts (the shocker escape)", "open_by_handle_at"),
		deny("reads or writes another process's memory", "process_vm_readv", "process_vm_writev"),
	)
	if !allowPtrace {
		rs = append(rs, deny("inspects and controls other processes", "ptrace")...)
		rs = append(rs, deny("copies another process's file descriptors, a ptrace power", "pidfd_getfd")...)
	}
	return rs
}

func terminalRules() []Rule {
	return []Rule{
		{Syscall: "ioctl", Errno: syscall.EPERM, Arg: &Arg{Index: 1, Mask: mask32, Value: tiocsti},
			Reason: "pushes keystrokes into a terminal: commands typed into the caller's shell"},
		{Syscall: "ioctl", Errno: syscall.EPERM, Arg: &Arg{Index: 1, Mask: mask32, Value: tioclinux},
			Reason: "console control, including pasting the selection as input"},
	}
}

func socketRules(o Options) []Rule {
	var rs []Rule
	if !o.AllowUnixSockets {
		rs = append(rs, Rule{Syscall: "socket", Errno: syscall.EPERM, Arg: &Arg{Mask: mask32, Value: afUnix},
			Reason: "reaches host daemons through socket files (docker.sock is a root shell); socketpair stays allowed"})
		// A datagram pair is connected only to itself, but sendto with an
		// address, or a new connect, sends from it to any socket file the
		// command can see: journald, syslog, systemd's notify socket.
		// Stream and seqpacket pairs ignore or refuse an address.
		rs = append(rs, Rule{Syscall: "socketpair", Errno: syscall.EPERM,
			Arg: &Arg{Mask: mask32, Value: afUnix}, And: &Arg{Index: 1, Mask: sockTypeMask, Value: sockDgram},
			Reason: "a unix datagram pair sends to any socket file by address: host daemons' datagram sockets"})
	}
	if o.DenyInet {
		for _, af := range []uint64{afInet, afInet6} {
			rs = append(rs, Rule{Syscall: "socket", Errno: syscall.EPERM, Arg: &Arg{Mask: mask32, Value: af},
				Reason: "no network: there is no network namespace to keep the command off the host's"})
		}
	}
	if o.TCPOnly && !o.DenyInet {
		rs = append(rs, tcpOnlyRules()...)
	}
	rs = append(rs, familyRules()...)
	return append(rs, netlinkRules()...)
}

// sockTypeMask is the part of socket's type argument that is the type;
// the rest are flags (SOCK_NONBLOCK, SOCK_CLOEXEC).
const sockTypeMask = 0xf

// tcpOnlyRules refuse IPv4 and IPv6 sockets of every type but
// SOCK_STREAM, and stream sockets of every protocol but 0 and
// IPPROTO_TCP (6): SCTP and MPTCP are streams that Landlock's TCP rules do
// not cover. A protocol is refused by any bit it sets outside 6's; the few
// values left (2, 4) the kernel refuses for a stream itself.
func tcpOnlyRules() []Rule {
	const reason = "only TCP leaves the sandbox, through the proxy: Landlock's port rules do not cover other protocols"
	var rs []Rule
	for _, af := range []uint64{afInet, afInet6} {
		family := &Arg{Index: 0, Mask: mask32, Value: af}
		// Type 0 the kernel refuses itself.
		for t := uint64(1); t <= sockTypeMask; t++ {
			if t == sockStream {
				continue
			}
			rs = append(rs, Rule{Syscall: "socket", Errno: syscall.EACCES, Arg: family,
				And: &Arg{Index: 1, Mask: sockTypeMask, Value: t}, Reason: reason})
		}
		for bit := 0; bit < 32; bit++ {
			if 1<<bit&ipprotoTCP != 0 {
				continue
			}
			rs = append(rs, Rule{Syscall: "socket", Errno: syscall.EACCES, Arg: family,
				And: &Arg{Index: 2, Mask: 1 << bit, Value: 1 << bit}, Reason: reason})
		}
	}
	return rs
}

// netlinkRules refuse every netlink protocol but route, which libc asks for
// the machine's addresses (getaddrinfo, getifaddrs, if_nameindex), with the
// errno of a protocol the kernel does not have. The others are kernel
// attack surface or a view of the host no command needs: generic netlink's
// many families (nl80211, taskstats, ...), device events (kobject uevent),
// socket diagnostics (ss falls back to /proc/net), audit, crypto, netfilter,
// xfrm, ...
func netlinkRules() []Rule {
	const reason = "a netlink protocol no command needs: only route (addresses, links) is allowed"
	var rs []Rule
	family := &Arg{Index: 0, Mask: mask32, Value: afNetlink}
	for p := uint64(1); p < 1<<netlinkBits; p++ {
		rs = append(rs, Rule{Syscall: "socket", Errno: syscall.EPROTONOSUPPORT, Arg: family,
			And: &Arg{Index: 2, Mask: mask32, Value: p}, Reason: reason})
	}
	for bit := netlinkBits; bit < 32; bit++ {
		rs = append(rs, Rule{Syscall: "socket", Errno: syscall.EPROTONOSUPPORT, Arg: family,
			And: &Arg{Index: 2, Mask: 1 << bit, Value: 1 << bit}, Reason: reason})
	}
	return rs
}

// netlinkBits: the kernel knows 32 netlink protocols (MAX_LINKS); larger
// values are refused by the bits they set.
const netlinkBits = 5

// neededFamilies are the socket families a command may create: unix and
// IP (within the options above), and netlink for its route protocol only
// (see netlinkRules).
var neededFamilies = []uint64{afUnix, afInet, afInet6, afNetlink}

// familyBits is how far families are refused one by one; every family from
// 1<<familyBits up is refused by the bits it sets. The kernel knows fewer
// than 64 (AF_MAX is 46 in 6.x) and refuses the rest itself.
const familyBits = 6

// familyRules refuse every other socket family, with the errno of a kernel
// built without it: AF_VSOCK reaches the host (on a virtual machine, the
// hypervisor) whatever the network setting, AF_ALG hands the kernel's
// crypto code to the command, and packet, bluetooth, tipc, rds, xdp and the
// rest are kernel attack surface no command needs. socketpair gets the same
// list: only unix pairs are allowed.
func familyRules() []Rule {
	const reason = "a socket family no command needs: kernel attack surface, and vsock reaches the host whatever the network"
	var rs []Rule
	for _, call := range []string{"socket", "socketpair"} {
		// 0 (AF_UNSPEC) the kernel refuses itself.
		for af := uint64(1); af < 1<<familyBits; af++ {
			if call == "socket" && slices.Contains(neededFamilies, af) || call == "socketpair" && af == afUnix {
				continue
			}
			rs = append(rs, Rule{Syscall: call, Errno: syscall.EAFNOSUPPORT, Arg: &Arg{Mask: mask32, Value: af}, Reason: reason})
		}
		for bit := familyBits; bit < 32; bit++ {
			rs = append(rs, Rule{Syscall: call, Errno: syscall.EAFNOSUPPORT, Arg: &Arg{Mask: 1 << bit, Value: 1 << bit}, Reason: reason})
		}
	}
	return rs
}

// faultSignals are the signals a Go program (the sandbox's init) takes for
// a fault of its own when they carry a code other than kill's.
var faultSignals = []uint64{sigIll, sigTrap, sigBus, sigFpe, sigSegv, sigStkflt, sigSys}

// signalRules keep the command from sending a signal that passes for a
// fault: queued with a code of the sender's choice (sigqueue), or chosen as
// the signal of a file's events (F_SETSIG), which the kernel sends with an
// I/O code to whatever process owns the file, the init included. kill and
// tgkill stay allowed: their code says who sent them.
func signalRules() []Rule {
	const reason = "sends a fault signal with a code that passes for a real fault: crashes the init"
	var rs []Rule
	for _, c := range []struct {
		call string
		arg  uint
	}{{"rt_sigqueueinfo", 1}, {"rt_tgsigqueueinfo", 2}, {"pidfd_send_signal", 1}} {
		for _, sig := range faultSignals {
			rs = append(rs, Rule{Syscall: c.call, Errno: syscall.EPERM, Arg: &Arg{Index: c.arg, Mask: mask32, Value: sig}, Reason: reason})
		}
	}
	return append(rs, Rule{Syscall: "fcntl", Errno: syscall.EPERM, Arg: &Arg{Index: 1, Mask: mask32, Value: fSetsig},
		Reason: "chooses the signal a file's events send to its owner, which can be the init: " + reason})
}

func concat(parts ...[]Rule) []Rule {
	var out []Rule
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Why is the reason the policy gives for refusing the call name with
// errno, whatever the options: "" when no rule does, or when rules with
// different reasons do (socket's EPERM: a unix socket, or any network
// without one).
func Why(name string, errno syscall.Errno) string {
	why := ""
	for _, o := range allOptions() {
		for _, r := range Policy(o) {
			if r.Syscall != name || r.Errno != errno {
				continue
			}
			if why != "" && why != r.Reason {
				return ""
			}
			why = r.Reason
		}
	}
	return why
}

// allOptions lists every Options that makes a policy of its own: the
// programs prebuilt/ holds.
func allOptions() []Options {
	var all []Options
	for _, ptrace := range []bool{false, true} {
		for _, unixSockets := range []bool{false, true} {
			for _, denyInet := range []bool{false, true} {
				all = append(all, Options{AllowPtrace: ptrace, AllowUnixSockets: unixSockets, DenyInet: denyInet})
			}
			// TCPOnly means nothing beside DenyInet: one program more.
			all = append(all, Options{AllowPtrace: ptrace, AllowUnixSockets: unixSockets, TCPOnly: true})
		}
	}
	return all
}
