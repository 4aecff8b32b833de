package corral

import (
	"fmt"
	"strings"

	"github.com/corralhq/corral/internal/testhook"
)

// Rung is how strongly a sandbox contains its commands. corral uses the
// full rung when the host allows it; Config.Fallback decides what happens
// when it does not. docs/layers.md says what each rung guarantees.
type Rung string

const (
	// RungFull: user, mount and PID namespaces (and a network namespace for
	// Network=none), Landlock and seccomp.
	RungFull Rung = "full"
	// RungLandlock: no namespaces; Landlock and seccomp applied to the
	// command directly, with a per-command temp dir as TMPDIR.
	RungLandlock Rung = "landlock"
	// RungSeatbelt: macOS; a generated Seatbelt profile applied by
	// /usr/bin/sandbox-exec (docs/macos.md).
	RungSeatbelt Rung = "seatbelt"
	// RungNone: no containment at all.
	RungNone Rung = "none"
)

// Fallback says what to do when the full rung is not available.
type Fallback string

const (
	// FallbackFail refuses to run, naming the missing layer.
	FallbackFail Fallback = "fail"
	// FallbackWarn runs on the best rung available and says so once.
	FallbackWarn Fallback = "warn"
)

// Layer names a part of a sandbox: in SetupError.Layer, in the doctor's
// report and in the CLI's messages. Every value is one of the constants
// below (docs/layers.md lists them).
type Layer string

// The layers the host probe checks, as Doctor reports them; a sandbox that
// needs one the host lacks fails with it named.
const (
	LayerUserNS   Layer = "user namespace"
	LayerMountNS  Layer = "mount namespace"
	LayerPIDNS    Layer = "pid namespace"
	LayerNetNS    Layer = "network namespace"
	LayerKernelNS Layer = "ipc/uts/cgroup ns" // IPC, UTS and cgroup: System V IPC, POSIX mqueues, host name, cgroup path
	LayerProc     Layer = "proc"
	LayerOverlay  Layer = "overlayfs"
	LayerLandlock Layer = "landlock"
	LayerSeccomp  Layer = "seccomp"
	LayerSeatbelt Layer = "seatbelt"
)

// The further parts a sandbox is built from, named only in SetupError.
const (
	// LayerNamespaces: the sandbox's process could not be cloned into its
	// namespaces.
	LayerNamespaces Layer = "namespaces"
	// LayerInit: the sandbox's init could not be started, stopped
	// answering, or died while the command ran (the command dies with it).
	LayerInit Layer = "init"
	// LayerStale: the host replaced or removed a path the sandbox had
	// mounted, since it was built, twice in a row.
	LayerStale Layer = "stale"
	// LayerTmp: the per-command temporary directory (landlock and
	// seatbelt rungs) could not be made.
	LayerTmp Layer = "tmp"
	// LayerMount: the mount tree could not be built or guarded.
	LayerMount Layer = "mount"
	// LayerMountWatch: a bind was lifted on the host while the command ran
	// and could not be restored; the command was killed.
	LayerMountWatch Layer = "mount watch"
	// LayerWorkspace: the workspace no longer exists on the host.
	LayerWorkspace Layer = "workspace"
	// LayerWritablePath: a writable path no longer exists on the host.
	LayerWritablePath Layer = "writable path"
	// LayerProtect: protected names inside the writable roots could not be
	// guarded.
	LayerProtect Layer = "protect"
	// LayerNSLimits: the sandbox could not forbid new namespaces inside
	// itself.
	LayerNSLimits Layer = "namespace limits"
	// LayerPrivileges: capabilities could not be dropped.
	LayerPrivileges Layer = "privileges"
	// LayerWorkdir: the command's working directory is missing or not a
	// directory inside the sandbox.
	LayerWorkdir Layer = "workdir"
	// LayerEgress: the network proxy of NetworkAllow could not be started
	// or given to the command.
	LayerEgress Layer = "egress"
	// LayerPlatform: this operating system has no sandbox backend.
	LayerPlatform Layer = "platform"
	// LayerSandbox: the backend failed in a way no other layer names.
	LayerSandbox Layer = "sandbox"
	// LayerLimits: a resource limit asked for cannot be enforced on this
	// host, or could not be set.
	LayerLimits Layer = "limits"
)

// layers lists every Layer constant, in the order docs/layers.md lists
// them.
var layers = []Layer{
	LayerUserNS, LayerMountNS, LayerPIDNS, LayerNetNS, LayerKernelNS, LayerProc, LayerOverlay,
	LayerLandlock, LayerSeccomp, LayerSeatbelt,
	LayerNamespaces, LayerInit, LayerStale, LayerTmp, LayerMount, LayerMountWatch, LayerWorkspace,
	LayerWritablePath, LayerProtect, LayerNSLimits, LayerPrivileges, LayerWorkdir, LayerEgress, LayerPlatform,
	LayerSandbox, LayerLimits,
}

// landlockScopeABI is the Landlock ABI that confines signals and abstract
// unix sockets to the sandbox.
const landlockScopeABI = 6

// LayerStatus is one layer's availability on this host.
type LayerStatus struct {
	Name      Layer `json:"name"`
	Available bool  `json:"available"`
	// Reason says why the layer is unavailable.
	Reason string `json:"reason,omitempty"`
	// Detail qualifies an available layer, e.g. "ABI 7".
	Detail string `json:"detail,omitempty"`
}

// host is what the probe found.
type host struct {
	layers      []LayerStatus
	landlockABI int
	// seatbelt marks a macOS host, whose ladder is seatbelt, then none.
	seatbelt bool
}

func (h *host) status(name Layer) LayerStatus {
	for _, l := range h.layers {
		if l.Name == name {
			return l
		}
	}
	return LayerStatus{Name: name, Reason: "not probed"}
}

// withTestHook returns h with the layers a test switched off marked
// unavailable.
func (h *host) withTestHook() *host {
	out := &host{landlockABI: h.landlockABI, seatbelt: h.seatbelt}
	for _, l := range h.layers {
		if testhook.Disabled(string(l.Name)) {
			l = LayerStatus{Name: l.Name, Reason: "disabled by a test"}
			if l.Name == LayerLandlock {
				out.landlockABI = 0
			}
		}
		out.layers = append(out.layers, l)
	}
	return out
}

// needs is what a sandbox asks of the host.
type needs struct {
	netNone     bool
	unixSockets bool
	fallback    Fallback
}

func (s *spec) needs() needs {
	// NetworkAllow's commands have a network namespace with only loopback,
	// as NetworkNone's do: the proxy is their only way out.
	own := s.Network == NetworkNone || s.Network == NetworkAllow
	return needs{netNone: own, unixSockets: s.UnixSockets, fallback: s.Fallback}
}

// rungPlan is the rung a sandbox runs on and the layers it uses there.
type rungPlan struct {
	rung     Rung
	landlock bool
	abi      int  // Landlock's, when landlock
	scope    bool // Landlock confines signals and abstract sockets
	seccomp  bool
	// without lists the full rung's layers this plan goes without.
	without []LayerStatus
}

// choose picks the rung for n on h. With FallbackFail anything short of the
// full rung (on macOS, the seatbelt rung) is an error naming the first
// missing layer.
func choose(h *host, n needs) (*rungPlan, error) {
	if h.seatbelt {
		return chooseSeatbelt(h, n)
	}
	full := append(namespaceNeeds(h, n), fullLandlockNeed(h, n), h.status(LayerSeccomp))
	without := unmet(full)
	if len(without) == 0 {
		return &rungPlan{rung: RungFull, landlock: true, abi: h.landlockABI, scope: h.landlockABI >= landlockScopeABI, seccomp: true}, nil
	}
	best := bestEffort(h, n, without)
	if n.fallback != FallbackWarn {
		return nil, refusal(without[0], best.rung)
	}
	return best, nil
}

// bestEffort is the highest rung h allows, with whatever layers it has.
func bestEffort(h *host, n needs, without []LayerStatus) *rungPlan {
	ll, sc := h.status(LayerLandlock).Available, h.status(LayerSeccomp).Available
	switch {
	case len(unmet(namespaceNeeds(h, n))) == 0:
		return &rungPlan{rung: RungFull, landlock: ll, abi: h.landlockABI, scope: ll && h.landlockABI >= landlockScopeABI, seccomp: sc, without: without}
	case barewall(h).Available:
		return &rungPlan{rung: RungLandlock, landlock: true, abi: h.landlockABI, scope: true, seccomp: sc, without: without}
	}
	return &rungPlan{rung: RungNone, without: without}
}

// namespaceNeeds are the layers the full rung builds its tree from.
func namespaceNeeds(h *host, n needs) []LayerStatus {
	ls := []LayerStatus{h.status(LayerUserNS), h.status(LayerMountNS), h.status(LayerPIDNS), h.status(LayerKernelNS), h.status(LayerProc)}
	if n.netNone {
		ls = append(ls, h.status(LayerNetNS))
	}
	return ls
}

// fullLandlockNeed is Landlock as the full rung needs it: any version, but
// with scoping when unix sockets are allowed on the host's network, where
// nothing else keeps the command off the host's abstract sockets.
func fullLandlockNeed(h *host, n needs) LayerStatus {
	l := h.status(LayerLandlock)
	if l.Available && n.unixSockets && !n.netNone && h.landlockABI < landlockScopeABI {
		return LayerStatus{Name: LayerLandlock, Reason: fmt.Sprintf(
			"ABI %d cannot keep abstract unix sockets inside the sandbox (needs %d), which AllowUnixSockets with the host network requires",
			h.landlockABI, landlockScopeABI)}
	}
	return l
}

// barewall is Landlock as the landlock rung needs it: with scoping, the
// only thing between the command and the host's processes there.
func barewall(h *host) LayerStatus {
	l := h.status(LayerLandlock)
	if l.Available && h.landlockABI < landlockScopeABI {
		return LayerStatus{Name: LayerLandlock, Reason: fmt.Sprintf(
			"ABI %d cannot keep signals and abstract unix sockets inside the sandbox (needs %d)", h.landlockABI, landlockScopeABI)}
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

// refusal is the error of a sandbox that will not run below the full rung.
func refusal(missing LayerStatus, possible Rung) error {
	hint := ` (set Fallback "warn" to run unsandboxed)`
	if possible != RungNone {
		hint = fmt.Sprintf(` (Fallback "warn" would run on rung %s)`, possible)
	}
	return &SetupError{Layer: missing.Name, Err: fmt.Errorf("unavailable: %s%s", missing.Reason, hint)}
}

// warning is the one line a FallbackWarn sandbox logs about its rung.
func (p *rungPlan) warning() string {
	if len(p.without) == 0 {
		return ""
	}
	parts := make([]string, len(p.without))
	for i, l := range p.without {
		parts[i] = string(l.Name) + " (" + l.Reason + ")"
	}
	what := "sandbox runs on rung " + string(p.rung)
	if p.rung == RungNone {
		what = "sandbox disabled: commands run with full host access"
	}
	return fmt.Sprintf("corral: %s, without %s", what, strings.Join(parts, "; "))
}
