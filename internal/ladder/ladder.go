package ladder

import (
	"fmt"
	"strings"

	"github.com/corralhq/corral/internal/testhook"
)

// Host is what the probe found.
type Host struct {
	Layers      []LayerStatus
	LandlockABI int
	// Seatbelt marks a macOS host, whose ladder is seatbelt, then none.
	Seatbelt bool
}

// Status is the named layer's status on h.
func (h *Host) Status(name Layer) LayerStatus {
	for _, l := range h.Layers {
		if l.Name == name {
			return l
		}
	}
	return LayerStatus{Name: name, Reason: "not probed"}
}

// WithTestHook returns h with the layers a test switched off marked
// unavailable.
func (h *Host) WithTestHook() *Host {
	out := &Host{LandlockABI: h.LandlockABI, Seatbelt: h.Seatbelt}
	for _, l := range h.Layers {
		if testhook.Disabled(string(l.Name)) {
			l = LayerStatus{Name: l.Name, Reason: "disabled by a test"}
			if l.Name == LayerLandlock {
				out.LandlockABI = 0
			}
		}
		out.Layers = append(out.Layers, l)
	}
	return out
}

// Needs is what a sandbox asks of the host.
type Needs struct {
	// NetNone: the commands get a network namespace of their own.
	NetNone     bool
	UnixSockets bool
	Fallback    Fallback
}

// Plan is the rung a sandbox runs on and the layers it uses there.
type Plan struct {
	Rung     Rung
	Landlock bool
	ABI      int  // Landlock's, when Landlock
	Scope    bool // Landlock confines signals and abstract sockets
	Seccomp  bool
	// Without lists the full rung's layers this plan goes without.
	Without []LayerStatus
}

// Choose picks the rung for n on h. With FallbackFail anything short of the
// full rung (on macOS, the seatbelt rung) is a [*Refusal] naming the first
// missing layer.
func Choose(h *Host, n Needs) (*Plan, error) {
	if h.Seatbelt {
		return chooseSeatbelt(h, n)
	}
	full := append(namespaceNeeds(h, n), fullLandlockNeed(h, n), h.Status(LayerSeccomp))
	without := unmet(full)
	if len(without) == 0 {
		return &Plan{Rung: RungFull, Landlock: true, ABI: h.LandlockABI, Scope: h.LandlockABI >= ScopeABI, Seccomp: true}, nil
	}
	best := bestEffort(h, n, without)
	if n.Fallback != FallbackWarn {
		return nil, &Refusal{Missing: without[0], Possible: best.Rung}
	}
	return best, nil
}

// bestEffort is the highest rung h allows, with whatever layers it has.
func bestEffort(h *Host, n Needs, without []LayerStatus) *Plan {
	ll, sc := h.Status(LayerLandlock).Available, h.Status(LayerSeccomp).Available
	switch {
	case len(unmet(namespaceNeeds(h, n))) == 0:
		return &Plan{Rung: RungFull, Landlock: ll, ABI: h.LandlockABI, Scope: ll && h.LandlockABI >= ScopeABI, Seccomp: sc, Without: without}
	case barewall(h).Available:
		return &Plan{Rung: RungLandlock, Landlock: true, ABI: h.LandlockABI, Scope: true, Seccomp: sc, Without: without}
	}
	return &Plan{Rung: RungNone, Without: without}
}

// namespaceNeeds are the layers the full rung builds its tree from.
func namespaceNeeds(h *Host, n Needs) []LayerStatus {
	ls := []LayerStatus{h.Status(LayerUserNS), h.Status(LayerMountNS), h.Status(LayerPIDNS), h.Status(LayerKernelNS), h.Status(LayerProc)}
	if n.NetNone {
		ls = append(ls, h.Status(LayerNetNS))
	}
	return ls
}

// fullLandlockNeed is Landlock as the full rung needs it: any version, but
// with scoping when unix sockets are allowed on the host's network, where
// nothing else keeps the command off the host's abstract sockets.
func fullLandlockNeed(h *Host, n Needs) LayerStatus {
	l := h.Status(LayerLandlock)
	if l.Available && n.UnixSockets && !n.NetNone && h.LandlockABI < ScopeABI {
		return LayerStatus{Name: LayerLandlock, Reason: fmt.Sprintf(
			"ABI %d cannot keep abstract unix sockets inside the sandbox (needs %d), which AllowUnixSockets with the host network requires",
			h.LandlockABI, ScopeABI)}
	}
	return l
}

// barewall is Landlock as the landlock rung needs it: with scoping, the
// only thing between the command and the host's processes there.
func barewall(h *Host) LayerStatus {
	l := h.Status(LayerLandlock)
	if l.Available && h.LandlockABI < ScopeABI {
		return LayerStatus{Name: LayerLandlock, Reason: fmt.Sprintf(
			"ABI %d cannot keep signals and abstract unix sockets inside the sandbox (needs %d)", h.LandlockABI, ScopeABI)}
	}
	return l
}

func unmet(ls []LayerStatus) []LayerStatus {
	var out []LayerStatus
	for _, l := range ls {
		if !l.Available {
			out = append(out, l)
		}
	}
	return out
}

// Refusal is the error of a sandbox that will not run below the full rung
// (on macOS, the seatbelt rung): Missing is the first layer it lacks,
// Possible the rung FallbackWarn would run on. Package corral reports it
// as a SetupError of that layer.
type Refusal struct {
	Missing  LayerStatus
	Possible Rung
}

func (r *Refusal) Error() string {
	hint := ` (set Fallback "warn" to run unsandboxed)`
	if r.Possible != RungNone {
		hint = fmt.Sprintf(` (Fallback "warn" would run on rung %s)`, r.Possible)
	}
	return fmt.Sprintf("unavailable: %s%s", r.Missing.Reason, hint)
}

// Warning is the one line a FallbackWarn sandbox logs about its rung, or
// "" on the rung it asked for.
func (p *Plan) Warning() string {
	if len(p.Without) == 0 {
		return ""
	}
	parts := make([]string, len(p.Without))
	for i, l := range p.Without {
		parts[i] = string(l.Name) + " (" + l.Reason + ")"
	}
	what := "sandbox runs on rung " + string(p.Rung)
	if p.Rung == RungNone {
		what = "sandbox disabled: commands run with full host access"
	}
	return fmt.Sprintf("corral: %s, without %s", what, strings.Join(parts, "; "))
}
