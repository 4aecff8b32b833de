// Package seccomp is the sandbox's system call filter: the policy, its
// compilation to BPF and loading the result.
//
// # Policy
//
// [Policy] is pure data: the calls a sandboxed command may not make, each
// with the errno it gets and a one-line reason. Everything else is allowed;
// the filter removes kernel attack surface and the few calls that would undo
// the other layers (mounts, namespaces, terminal injection, host sockets).
// Calls made through another architecture's entry points (int 0x80 on
// x86-64, the x32 ABI) kill the process, since the policy names native calls
// only.
//
// # Compile once, load raw
//
// [Compile] turns a policy into classic BPF with libseccomp. It needs cgo
// and runs once per sandbox in the caller. [Load] installs the raw program
// with the seccomp(2) system call on the calling thread only, with plain
// golang.org/x/sys/unix: the sandbox's init never links or runs libseccomp.
//
//	bpf, err := seccomp.Compile(seccomp.Policy(seccomp.Options{}))
//	// ... in the init, on the thread that starts the command:
//	err = seccomp.Load(bpf)
//
// A build without cgo compiles, and [Compile] reports [ErrUnavailable].
//
// # Limitations
//
// A filter sees register values, not memory: clone3's flags sit in a
// structure it cannot read, so clone3 answers ENOSYS and libc falls back to
// clone, whose flags it can check. Go's os/exec uses clone3 only for
// SysProcAttr.UseCgroupFD and has no fallback, so that option fails inside
// the sandbox.
package seccomp
