package corral

import (
	"errors"

	"github.com/corralhq/corral/internal/ladder"
)

// Rung is how strongly a sandbox contains its commands. corral uses the
// full rung when the host allows it; Config.Fallback decides what happens
// when it does not. docs/layers.md says what each rung guarantees.
type Rung = ladder.Rung

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
type Fallback = ladder.Fallback

const (
	// FallbackFail refuses to run, naming the missing layer.
	FallbackFail Fallback = "fail"
	// FallbackWarn runs on the best rung available and says so once.
	FallbackWarn Fallback = "warn"
)

// Layer names a part of a sandbox: in SetupError.Layer, in the doctor's
// report and in the CLI's messages. Every value is one of the constants
// below (docs/layers.md lists them).
type Layer = ladder.Layer

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
// them. The constants above are package ladder's under their public names
// (TestLayersMatchLadder).
var layers = ladder.Layers()

// LayerStatus is one layer's availability on this host: Name, whether it
// is Available, the Reason it is not, and a Detail that qualifies an
// available layer, e.g. "ABI 7".
type LayerStatus = ladder.LayerStatus

// needs is what s asks of the host.
func (s *spec) needs() ladder.Needs {
	// NetworkAllow's commands have a network namespace with only loopback,
	// as NetworkNone's do: the proxy is their only way out.
	own := s.Network == NetworkNone || s.Network == NetworkAllow
	return ladder.Needs{NetNone: own, UnixSockets: s.UnixSockets, Fallback: s.Fallback}
}

// choose is ladder.Choose with its refusal as a SetupError of the missing
// layer.
func choose(h *ladder.Host, n ladder.Needs) (*ladder.Plan, error) {
	p, err := ladder.Choose(h, n)
	var r *ladder.Refusal
	if errors.As(err, &r) {
		return nil, &SetupError{Layer: r.Missing.Name, Err: r}
	}
	return p, err
}
