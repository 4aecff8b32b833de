//go:build !linux && !darwin

package corral

import "runtime"

// probeHost reports every Linux layer missing.
func probeHost() *host { return probeHostFully() }

// probeHostFully reports every Linux layer missing.
func probeHostFully() *host {
	h := &host{}
	for _, n := range []Layer{LayerUserNS, LayerMountNS, LayerPIDNS, LayerKernelNS, LayerNetNS, LayerProc, LayerOverlay, LayerLandlock, LayerSeccomp} {
		h.layers = append(h.layers, LayerStatus{Name: n, Reason: "Linux only, this is " + runtime.GOOS})
	}
	return h
}
