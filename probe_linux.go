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
	probeOnce sync.Once
	probed    *host
)

// probeHost finds out once per process which layers this host offers. The
// first call costs a few milliseconds (two small processes); later calls
// cost nothing, so spawning never probes.
func probeHost() *host {
	probeOnce.Do(func() { probed = runProbe() })
	return probed
}

func runProbe() *host {
	h := &host{landlockABI: landlock.ABI()}
	h.layers = append(namespaceLayers(), landlockLayer(h.landlockABI), seccompLayer())
	return h
}

func namespaceLayers() []LayerStatus {
	r, err := nsjail.Probe()
	if err != nil {
		out := []LayerStatus{}
		for _, n := range []string{LayerUserNS, LayerMountNS, LayerPIDNS, LayerNetNS, LayerProc, LayerOverlay} {
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
		layerOf(LayerNetNS, r.NetNS, "network namespace: "),
		proc,
		layerOf(LayerOverlay, r.Overlay, "overlayfs in a user namespace: "),
	}
}

func layerOf(name string, c nsjail.Check, prefix string) LayerStatus {
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
