package ladder

import (
	"fmt"
	"sync"

	"github.com/corralhq/corral/landlock"
	"github.com/corralhq/corral/nsjail"
	"github.com/corralhq/corral/seccomp"
)

var (
	predictOnce, probeOnce sync.Once
	predicted, probed      *Host
)

// Probe is what New picks a rung from, found out once per process.
// Trying the namespaces costs two short-lived processes (several
// milliseconds, as much as a whole `corral run`), so where nothing the
// kernel exposes argues against them they are taken as given: a host that
// then refuses one fails the sandbox with that layer named, never runs it
// weaker. Anywhere in doubt the probe runs. Landlock and seccomp are always
// asked: that takes a system call each.
func Probe() *Host {
	predictOnce.Do(func() {
		if h, ok := predictHost(); ok {
			predicted = h
		} else {
			predicted = ProbeFully()
		}
	})
	return predicted
}

// ProbeFully tries every layer, once per process: what Doctor reports.
func ProbeFully() *Host {
	probeOnce.Do(func() {
		h := &Host{LandlockABI: landlock.ABI()}
		h.Layers = append(namespaceLayers(nsjail.ProbeNamespaces()), landlockLayer(h.LandlockABI), seccompLayer())
		probed = h
	})
	return probed
}

// predictHost takes the namespace layers as available where nothing the
// kernel exposes argues against them (nsjail.PredictNamespaces).
func predictHost() (*Host, bool) {
	n, ok := nsjail.PredictNamespaces()
	if !ok {
		return nil, false
	}
	h := &Host{LandlockABI: landlock.ABI()}
	h.Layers = append(namespaceLayers(n), landlockLayer(h.LandlockABI), seccompLayer())
	return h, true
}

// namespaceLayers names the Linux backend's verdicts on the namespace
// features as the layers they are.
func namespaceLayers(n nsjail.Namespaces) []LayerStatus {
	out := []LayerStatus{
		statusOf(LayerUserNS, n.UserNS), statusOf(LayerMountNS, n.MountNS), statusOf(LayerPIDNS, n.PIDNS),
		statusOf(LayerKernelNS, n.KernelObjects), statusOf(LayerNetNS, n.NetNS), statusOf(LayerProc, n.Proc),
		statusOf(LayerOverlay, n.Overlay),
	}
	if n.Predicted {
		for i := range out {
			out[i].Detail = "predicted, not tried"
		}
	}
	return out
}

func statusOf(name Layer, v nsjail.Verdict) LayerStatus {
	return LayerStatus{Name: name, Available: v.OK, Reason: v.Reason}
}

func landlockLayer(abi int) LayerStatus {
	if abi < 1 {
		return LayerStatus{Name: LayerLandlock, Reason: landlock.Why()}
	}
	d := fmt.Sprintf("ABI %d", abi)
	if abi < ScopeABI {
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
