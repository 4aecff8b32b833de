//go:build !linux && !darwin

package ladder

import "runtime"

// Probe reports every Linux layer missing.
func Probe() *Host { return ProbeFully() }

// ProbeFully reports every Linux layer missing.
func ProbeFully() *Host {
	h := &Host{}
	for _, n := range []Layer{LayerUserNS, LayerMountNS, LayerPIDNS, LayerKernelNS, LayerNetNS, LayerProc, LayerOverlay, LayerLandlock, LayerSeccomp} {
		h.Layers = append(h.Layers, LayerStatus{Name: n, Reason: "Linux only, this is " + runtime.GOOS})
	}
	return h
}
