package nsjail

import (
	"bytes"
	"os"
	"strings"
)

// Verdict is one namespace feature on this host: whether it works, and
// why not in words for people when it does not.
type Verdict struct {
	OK     bool
	Reason string
}

// Namespaces is what this host offers of the namespace features the full
// rung is built from, with the reasons the kernel, its sysctls and the
// visible mounts give for what is missing.
type Namespaces struct {
	UserNS, MountNS, PIDNS, KernelObjects, NetNS, Proc, Overlay Verdict
	// Predicted: taken as given from what the kernel exposes, not tried.
	Predicted bool
}

// PredictNamespaces takes the namespace features as available when the
// kernel has them, no sysctl switches them off, no seccomp filter sits on
// this process (as in most containers) and nothing covers parts of /proc;
// ok is false anywhere in doubt, where ProbeNamespaces must try them.
func PredictNamespaces() (n Namespaces, ok bool) {
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	hasNS := func(ns string) bool { _, err := os.Stat("/proc/self/ns/" + ns); return err == nil }
	if !namespacesLikely(hasNS, readSysctls(), underSeccomp(), bytes.NewReader(mi)) {
		return Namespaces{}, false
	}
	yes := Verdict{OK: true}
	return Namespaces{UserNS: yes, MountNS: yes, PIDNS: yes, KernelObjects: yes, NetNS: yes, Proc: yes, Overlay: yes, Predicted: true}, true
}

// ProbeNamespaces tries every namespace feature in a re-executed child
// ([runProbe]) and explains each failure.
func ProbeNamespaces() Namespaces {
	r, err := runProbe()
	if err != nil {
		no := Verdict{Reason: err.Error()}
		return Namespaces{UserNS: no, MountNS: no, PIDNS: no, KernelObjects: no, NetNS: no, Proc: no, Overlay: no}
	}
	user := verdictOf(r.UserNS, "")
	if !r.UserNS.OK {
		user.Reason = userNSReason(r.UserNS.Errno, r.UserNS.Err, readSysctls(), underSeccomp())
	} else if !r.MountNS.OK && apparmorRestricted() {
		// The namespace exists but grants no capability in it.
		user = Verdict{Reason: userNSReason(0, r.MountNS.Err, readSysctls(), false)}
	}
	proc := verdictOf(r.Proc, "")
	if !r.Proc.OK && r.MountNS.OK {
		mi, _ := os.ReadFile("/proc/self/mountinfo")
		proc.Reason = procReason(r.Proc.Errno, r.Proc.Err, bytes.NewReader(mi))
	}
	return Namespaces{
		UserNS:        user,
		MountNS:       verdictOf(r.MountNS, "mount namespace: "),
		PIDNS:         verdictOf(r.PIDNS, "pid namespace: "),
		KernelObjects: verdictOf(r.KernelObjects, "ipc, uts or cgroup namespace: "),
		NetNS:         verdictOf(r.NetNS, "network namespace: "),
		Proc:          proc,
		Overlay:       verdictOf(r.Overlay, "overlayfs in a user namespace: "),
	}
}

func verdictOf(c check, prefix string) Verdict {
	if c.OK {
		return Verdict{OK: true}
	}
	return Verdict{Reason: prefix + c.Err}
}

func readSysctls() map[string]string {
	out := map[string]string{}
	for _, s := range sysctls {
		b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(s.name, ".", "/"))
		if err == nil {
			out[s.name] = strings.TrimSpace(string(b))
		}
	}
	return out
}

func apparmorRestricted() bool {
	return readSysctls()["kernel.apparmor_restrict_unprivileged_userns"] == "1"
}

// underSeccomp reports whether this process runs under a seccomp filter.
func underSeccomp() bool {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
			return strings.TrimSpace(v) == "2"
		}
	}
	return false
}
