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
// # Generated ahead, loaded raw
//
// [Compile] turns a policy into classic BPF with libseccomp. libseccomp is
// the generator and the test oracle, never a requirement of a user's
// build: it is compiled in only with cgo and the libseccomp build tag
// (`go test -tags libseccomp`, which needs libseccomp-dev). The policy has
// eight variants (three booleans in [Options]), so `go generate` compiles
// every one of them for amd64 and arm64 into prebuilt/, and [Filter] hands
// out the embedded program: every build filters alike, with or without
// cgo, and no sandbox pays for compiling. On other architectures [Filter]
// compiles at run time, in a build with the tag only. A test (with the
// tag) runs each generated program through a BPF simulator for every
// system call number of its architecture and checks the outcome against
// [Policy], so a policy change without regenerating fails the suite.
//
// [Load] installs a program with the seccomp(2) system call on the calling
// thread only, with plain golang.org/x/sys/unix: the sandbox's init never
// links or runs libseccomp.
//
//	bpf, err := seccomp.Filter(seccomp.Options{})
//	// ... in the init, on the thread that starts the command:
//	err = seccomp.Load(bpf)
//
// A build without the tag on an architecture with nothing generated
// compiles, and [Filter] and [Compile] report [ErrUnavailable].
//
// # Watching writes
//
// [NotifyProgram] is a second, small program, built in Go from the table of
// write-intent calls ([WriteCalls]) rather than generated: it refuses
// nothing, and stops those calls (opens only when their flags ask to
// write) in a listener ([LoadListener]) that answers with [Continue].
//
// A [Watch] joins a policy's program and NotifyProgram into the one filter
// a listener is given, since a thread's chain may have only one filter
// with a listener and a refusal outranks a notification across filters:
// the policy's refusals (but ENOSYS) stop in the listener, which answers
// each with the policy's errno ([Watch.Refuses], [Fail]), and fail with
// ENOSYS should the listener be gone. The sandbox's init uses it to report
// what the command tried to write and which calls the policy refused.
// [Watch.Also] stops more there: every open and the execs ([ReadCalls]),
// for the reads of hidden paths, or the execs alone, for the memory limit
// the init sets on the command at its first exec; [ExecProgram] stops the
// execs alone where no watch is loaded.
//
// [CreateProgram] stops only the calls that can create a name ([CreateCalls]:
// opens with O_CREAT, mkdir, mknod, symlink, link, rename), for a listener
// that performs them itself and answers with [ReturnValue] or [ReturnFile]: a
// listener that read a name and let the call go on would decide on memory
// another thread of the caller can change before the kernel reads it again.
//
// # Connections made by the listener
//
// [ConnectProgram] stops every connect and listen in a listener and refuses
// sends with MSG_FASTOPEN, whose connect no security module sees. [Then]
// puts it after a policy's program ([Program]) or a watch's, as one filter.
// The listener takes the command's socket with [GetFd], makes the call
// itself and answers with its result ([Return]). The sandbox's init uses it
// on the landlock rung, where Landlock's port rules cannot name the proxy's
// address.
//
// # Limitations
//
// A filter sees register values, not memory: clone3's flags sit in a
// structure it cannot read, so clone3 answers ENOSYS and libc falls back to
// clone, whose flags it can check. Go's os/exec uses clone3 only for
// SysProcAttr.UseCgroupFD and has no fallback, so that option fails inside
// the sandbox.
package seccomp
