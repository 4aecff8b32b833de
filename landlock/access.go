package landlock

import (
	gl "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Access is a set of Landlock filesystem rights (LANDLOCK_ACCESS_FS_*).
type Access uint64

func (a Access) String() string { return gl.AccessFSSet(a).String() }

// The rights a sandbox hands out, as classes of paths.
const (
	// None grants nothing: the tree cannot be read, listed, written or run.
	None Access = 0
	// ReadOnly lets a tree be read, listed and executed.
	ReadOnly Access = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	// ReadWrite adds creating, changing, removing, renaming and linking
	// entries and connecting to unix sockets that live in the tree. It never
	// includes creating device nodes.
	ReadWrite Access = ReadOnly | ll.AccessFSWriteFile | ll.AccessFSRemoveDir |
		ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg |
		ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeSym |
		ll.AccessFSRefer | ll.AccessFSTruncate | ll.AccessFSResolveUnix
	// Device is for device files every program writes to, such as
	// /dev/null: reading, writing and opening with O_TRUNC (a shell's ">").
	Device Access = ReadOnly | ll.AccessFSWriteFile | ll.AccessFSTruncate
	// Terminal adds ioctls on device files, so terminal modes and window
	// sizes keep working on ttys opened inside the sandbox.
	Terminal Access = Device | ll.AccessFSIoctlDev
)

// fileRights are the rights the kernel accepts on a rule for a file that is
// not a directory.
const fileRights Access = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
	ll.AccessFSTruncate | ll.AccessFSIoctlDev

// handledFS are the filesystem rights each ABI version knows, by version.
var handledFS = []Access{
	0,
	(1 << 13) - 1, // 1: execute … make_sym
	(1 << 14) - 1, // 2: refer
	(1 << 15) - 1, // 3: truncate
	(1 << 15) - 1, // 4: TCP only
	(1 << 16) - 1, // 5: ioctl_dev
	(1 << 16) - 1, // 6: scoping only
	(1 << 16) - 1, // 7: logging only
	(1 << 16) - 1, // 8: thread sync only
	(1 << 17) - 1, // 9: resolve_unix
}

// HandledFS returns the filesystem rights a ruleset handles at ABI version
// abi: every right the kernel knows, so that anything not granted is denied.
func HandledFS(abi int) Access {
	switch {
	case abi <= 0:
		return 0
	case abi >= len(handledFS):
		return handledFS[len(handledFS)-1]
	}
	return handledFS[abi]
}

// The first ABI version with each feature beyond filesystem rights.
const (
	// ABINet restricts TCP bind and connect.
	ABINet = 4
	// ABIScope confines abstract unix sockets and signals to the domain.
	ABIScope = 6
	// ABIResolveUnix restricts connecting to pathname unix sockets.
	ABIResolveUnix = 9
)
