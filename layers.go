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
	RungFull = ladder.RungFull
	// RungLandlock: no namespaces; Landlock and seccomp applied to the
	// command directly, with a per-command temp dir as TMPDIR.
	RungLandlock = ladder.RungLandlock
	// RungSeatbelt: macOS; a generated Seatbelt profile applied by
	// /usr/bin/sandbox-exec (docs/macos.md).
	RungSeatbelt = ladder.RungSeatbelt
	// RungNone: no containment at all.
	RungNone = ladder.RungNone
)

// Fallback says what to do when the full rung is not available.
type Fallback = ladder.Fallback

const (
	// FallbackFail refuses to run, naming the missing layer.
	FallbackFail = ladder.FallbackFail
	// FallbackWarn runs on the best rung available and says so once.
	FallbackWarn = ladder.FallbackWarn
)

// Layer names a part of a sandbox: in SetupError.Layer, in the doctor's
// report and in the CLI's messages. Every value is one of the constants
// below (docs/layers.md lists them).
type Layer = ladder.Layer

// The layers the host probe checks, as Doctor reports them; a sandbox that
// needs one the host lacks fails with it named.
const (
	LayerUserNS   = ladder.LayerUserNS
	LayerMountNS  = ladder.LayerMountNS
	LayerPIDNS    = ladder.LayerPIDNS
	LayerNetNS    = ladder.LayerNetNS
	LayerKernelNS = ladder.LayerKernelNS // IPC, UTS and cgroup: System V IPC, POSIX mqueues, host name, cgroup path
	LayerProc     = ladder.LayerProc
	LayerOverlay  = ladder.LayerOverlay
	LayerLandlock = ladder.LayerLandlock
	LayerSeccomp  = ladder.LayerSeccomp
	LayerSeatbelt = ladder.LayerSeatbelt
)

// The further parts a sandbox is built from, named only in SetupError.
const (
	// LayerNamespaces: the sandbox's process could not be cloned into its
	// namespaces.
	LayerNamespaces = ladder.LayerNamespaces
	// LayerInit: the sandbox's init could not be started, stopped
	// answering, or died while the command ran (the command dies with it).
	LayerInit = ladder.LayerInit
	// LayerStale: the host replaced or removed a path the sandbox had
	// mounted, since it was built, twice in a row.
	LayerStale = ladder.LayerStale
	// LayerTmp: the per-command temporary directory (landlock and
	// seatbelt rungs) could not be made.
	LayerTmp = ladder.LayerTmp
	// LayerMount: the mount tree could not be built or guarded.
	LayerMount = ladder.LayerMount
	// LayerMountWatch: a bind was lifted on the host while the command ran
	// and could not be restored; the command was killed.
	LayerMountWatch = ladder.LayerMountWatch
	// LayerWorkspace: the workspace no longer exists on the host.
	LayerWorkspace = ladder.LayerWorkspace
	// LayerWritablePath: a writable path no longer exists on the host.
	LayerWritablePath = ladder.LayerWritablePath
	// LayerProtect: protected names inside the writable roots could not be
	// guarded.
	LayerProtect = ladder.LayerProtect
	// LayerNSLimits: the sandbox could not forbid new namespaces inside
	// itself.
	LayerNSLimits = ladder.LayerNSLimits
	// LayerPrivileges: capabilities could not be dropped.
	LayerPrivileges = ladder.LayerPrivileges
	// LayerWorkdir: the command's working directory is missing or not a
	// directory inside the sandbox.
	LayerWorkdir = ladder.LayerWorkdir
	// LayerEgress: the network proxy of NetworkAllow could not be started
	// or given to the command.
	LayerEgress = ladder.LayerEgress
	// LayerPlatform: this operating system has no sandbox backend.
	LayerPlatform = ladder.LayerPlatform
	// LayerSandbox: the backend failed in a way no other layer names.
	LayerSandbox = ladder.LayerSandbox
	// LayerLimits: a resource limit asked for cannot be enforced on this
	// host, or could not be set.
	LayerLimits = ladder.LayerLimits
)

// layers lists every Layer constant, in the order docs/layers.md lists
// them.
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
