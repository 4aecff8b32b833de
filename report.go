package corral

// ViolationKind names what kind of thing the sandbox refused.
type ViolationKind string

const (
	// ViolationWrite is a write outside the writable paths.
	ViolationWrite ViolationKind = "write"
	// ViolationRead is a read of a hidden path.
	ViolationRead ViolationKind = "read"
	// ViolationPlant is a write under a protected name (see
	// [ProtectedNames]) that did not reach the host.
	ViolationPlant ViolationKind = "plant"
	// ViolationNetwork is a refused network destination.
	ViolationNetwork ViolationKind = "network"
	// ViolationSyscall is a system call the filter refused.
	ViolationSyscall ViolationKind = "syscall"
	// ViolationLimit is a resource limit the command hit.
	ViolationLimit ViolationKind = "limit"
)

// Violation is one thing the sandbox refused a command, in words the
// caller (and the model behind it) can act on. Repeats of the same kind,
// target and rule are one Violation with a Count.
//
// Paths and names come from what the sandboxed process asked for: they
// are hints for the reader, never policy.
type Violation struct {
	Kind ViolationKind `json:"kind"`
	// Target is the path, "host:port", system call or limit refused.
	Target string `json:"target"`
	// Rule is why, in the caller's own terms: "outside the writable
	// paths", "hidden by --hide ~/.ssh", "protected: .git/hooks", "not in
	// allowed domains".
	Rule string `json:"rule"`
	// Process is the name of the process that was refused, when known.
	Process string `json:"process,omitempty"`
	Count   int    `json:"count"`
}
