package ladder

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

// Layers lists every Layer constant, in the order docs/layers.md lists
// them.
func Layers() []Layer {
	return []Layer{
		LayerUserNS, LayerMountNS, LayerPIDNS, LayerNetNS, LayerKernelNS, LayerProc, LayerOverlay,
		LayerLandlock, LayerSeccomp, LayerSeatbelt,
		LayerNamespaces, LayerInit, LayerStale, LayerTmp, LayerMount, LayerMountWatch, LayerWorkspace,
		LayerWritablePath, LayerProtect, LayerNSLimits, LayerPrivileges, LayerWorkdir, LayerEgress, LayerPlatform,
		LayerSandbox, LayerLimits,
	}
}

// ScopeABI is the Landlock ABI that confines signals and abstract
// unix sockets to the sandbox.
const ScopeABI = 6

// LayerStatus is one layer's availability on this host.
type LayerStatus struct {
	Name      Layer `json:"name"`
	Available bool  `json:"available"`
	// Reason says why the layer is unavailable.
	Reason string `json:"reason,omitempty"`
	// Detail qualifies an available layer, e.g. "ABI 7".
	Detail string `json:"detail,omitempty"`
}
