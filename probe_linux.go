package corral

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/corralhq/corral/landlock"
	"github.com/corralhq/corral/nsjail"
	"github.com/corralhq/corral/seccomp"
)

var (
	predictOnce, probeOnce sync.Once
	predicted, probed      *host
)

// probeHost is what New picks a rung from, found out once per process.
// Trying the namespaces costs two short-lived processes (several
// milliseconds, as much as a whole `corral run`), so where nothing the
// kernel exposes argues against them they are taken as given: a host that
// then refuses one fails the sandbox with that layer named, never runs it
// weaker. Anywhere in doubt the probe runs. Landlock and seccomp are always
// asked: that takes a system call each.
func probeHost() *host {
	predictOnce.Do(func() {
		if h, ok := predictHost(); ok {
			predicted = h
		} else {
			predicted = probeHostFully()
		}
	})
	return predicted
}

// probeHostFully tries every layer, once per process: what Doctor reports.
func probeHostFully() *host {
	probeOnce.Do(func() {
		h := &host{landlockABI: landlock.ABI()}
		h.layers = append(namespaceLayers(), landlockLayer(h.landlockABI), seccompLayer())
		probed = h
	})
	return probed
}

// predictHost takes the namespace layers as available when the kernel has
// them, no sysctl switches them off, no seccomp filter sits on this process
// (as in most containers) and nothing covers parts of /proc.
func predictHost() (*host, bool) {
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	hasNS := func(ns string) bool { _, err := os.Stat("/proc/self/ns/" + ns); return err == nil }
	if !namespacesLikely(hasNS, readSysctls(), underSeccomp(), bytes.NewReader(mi)) {
		return nil, false
	}
	h := &host{landlockABI: landlock.ABI()}
	for _, n := range []Layer{LayerUserNS, LayerMountNS, LayerPIDNS, LayerKernelNS, LayerNetNS, LayerProc, LayerOverlay} {
		h.layers = append(h.layers, LayerStatus{Name: n, Available: true, Detail: "predicted, not tried"})
	}
	h.layers = append(h.layers, landlockLayer(h.landlockABI), seccompLayer())
	return h, true
}

func namespaceLayers() []LayerStatus {
	r, err := nsjail.Probe()
	if err != nil {
		out := []LayerStatus{}
		for _, n := range []Layer{LayerUserNS, LayerMountNS, LayerPIDNS, LayerKernelNS, LayerNetNS, LayerProc, LayerOverlay} {
			out = append(out, LayerStatus{Name: n, Reason: err.Error()})
		}
		return out
	}
	user := layerOf(LayerUserNS, r.UserNS, "")
	if !r.UserNS.OK {
		user.Reason = userNSReason(r.UserNS.Errno, r.UserNS.Err, readSysctls(), underSeccomp())
	} else if !r.MountNS.OK && apparmorRestricted() {
		// The namespace exists but grants no capability in it.
		user = LayerStatus{Name: LayerUserNS, Reason: userNSReason(0, r.MountNS.Err, readSysctls(), false)}
	}
	proc := layerOf(LayerProc, r.Proc, "")
	if !r.Proc.OK && r.MountNS.OK {
		mi, _ := os.ReadFile("/proc/self/mountinfo")
		proc.Reason = procReason(r.Proc.Errno, r.Proc.Err, bytes.NewReader(mi))
	}
	return []LayerStatus{
		user,
		layerOf(LayerMountNS, r.MountNS, "mount namespace: "),
		layerOf(LayerPIDNS, r.PIDNS, "pid namespace: "),
		layerOf(LayerKernelNS, r.KernelObjects, "ipc, uts or cgroup namespace: "),
		layerOf(LayerNetNS, r.NetNS, "network namespace: "),
		proc,
		layerOf(LayerOverlay, r.Overlay, "overlayfs in a user namespace: "),
	}
}

func layerOf(name Layer, c nsjail.Check, prefix string) LayerStatus {
	if c.OK {
		return LayerStatus{Name: name, Available: true}
	}
	return LayerStatus{Name: name, Reason: prefix + c.Err}
}

func landlockLayer(abi int) LayerStatus {
	if abi < 1 {
		return LayerStatus{Name: LayerLandlock, Reason: landlock.Why()}
	}
	d := fmt.Sprintf("ABI %d", abi)
	if abi < landlockScopeABI {
		d += ": no signal or abstract socket scoping"
	}
	return LayerStatus{Name: LayerLandlock, Available: true, Detail: d}
}

func seccompLayer() LayerStatus {
	if ok, why := seccomp.Available(); !ok {
		return LayerStatus{Name: LayerSeccomp, Reason: why}
	}
	return LayerStatus{Name: LayerSeccomp, Available: true, Detail: seccomp.Version()}
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
