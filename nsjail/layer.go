package nsjail

// Layer names the part of a sandbox that failed, in an [Error]. Every value
// is one of the constants below; the root package reports each under the
// same name as corral.Layer.
type Layer string

// The layers this package reports.
const (
	LayerNamespaces Layer = "namespaces" // cloning the init into its namespaces
	LayerInit       Layer = "init"       // the init: started, answering, alive
	// LayerStale: a sandbox built ahead whose mounts the host has undone
	// since (a path replaced or removed); the jail discards it and builds a
	// fresh one, so a caller sees it only when that happens twice.
	LayerStale        Layer = "stale"
	LayerTmp          Layer = "tmp"               // the per-command temp dir of the landlock rung
	LayerMount        Layer = "mount"             // building or guarding the mount tree
	LayerOverlay      Layer = "overlayfs"         // an overlay mount
	LayerMountWatch   Layer = "mount watch"       // watching the binds while the command runs
	LayerWorkspace    Layer = "workspace"         // the workspace, gone from the host
	LayerWritablePath Layer = "writable path"     // a writable path, gone from the host
	LayerProtect      Layer = "protect"           // protected names inside writable roots
	LayerNetNS        Layer = "network namespace" // the loopback of a network namespace
	LayerNSLimits     Layer = "namespace limits"  // the per-user-namespace limits set to zero
	LayerPrivileges   Layer = "privileges"        // dropping capabilities, no_new_privs
	LayerLandlock     Layer = "landlock"
	LayerSeccomp      Layer = "seccomp"
	LayerWorkdir      Layer = "workdir" // the command's working directory
	LayerExec         Layer = "exec"    // finding and starting the command
	LayerLimits       Layer = "limits"  // the command's resource limits
)

// Layers lists every layer this package reports.
func Layers() []Layer {
	return []Layer{
		LayerNamespaces, LayerInit, LayerStale, LayerTmp, LayerMount, LayerOverlay, LayerMountWatch,
		LayerWorkspace, LayerWritablePath, LayerProtect, LayerNetNS, LayerNSLimits, LayerPrivileges,
		LayerLandlock, LayerSeccomp, LayerWorkdir, LayerExec, LayerLimits,
	}
}

// failCode classifies a failure beyond its layer, so the caller maps it to a
// typed error without reading its text.
type failCode string

const (
	// codeNotFound: the command was not found (with LayerExec).
	codeNotFound failCode = "not found"
	// codeNotExecutable: the command exists but cannot be executed (with
	// LayerExec).
	codeNotExecutable failCode = "not executable"
)
