// Package corral runs an AI agent's shell and exec tool subprocesses inside
// a kernel-enforced sandbox, with no external binary.
//
// Filtering command strings does not contain an agent: refused `cat
// ../secret`, it runs `cp ../secret /tmp/` or a one-line script instead.
// corral lets the command run and has the kernel refuse the access: the host
// is read-only, the workspace is writable, secrets and other processes are
// out of reach.
//
// # Usage
//
// Call [Init] first in main (the library re-executes the program's own binary
// to build sandboxes), create a [Sandbox] once, then use [Sandbox.Command]
// the way you would use exec.CommandContext:
//
//	func main() {
//		if corral.Init() {
//			return
//		}
//		sb, err := corral.New(corral.Config{
//			Workspace:     "/srv/agent/workspace",
//			ReadOnlyPaths: []string{"/srv/agent/data"},
//			HiddenPaths:   []string{"/srv/agent/secrets"},
//		})
//		if err != nil {
//			log.Fatal(err)
//		}
//		out, err := sb.Command(ctx, "sh", "-c", "ls; cp ../data/db /tmp/").CombinedOutput()
//		...
//	}
//
// Tests of a package that starts sandboxes need the same first call, in
// TestMain, since the test binary is what gets re-executed:
//
//	func TestMain(m *testing.M) {
//		if corral.Init() {
//			return
//		}
//		os.Exit(m.Run())
//	}
//
// A program whose own start-up is heavy (large SDKs, protobuf registries)
// runs its sandboxes' init from corral-init, a small binary built from
// cmd/corral-init, instead of itself: [Config.Helper], or the environment
// variable CORRAL_HELPER (see [docs/library.md]).
//
// Building needs no C library: the seccomp filters come generated ahead
// and embedded, so a build with or without cgo works on any Linux machine
// with Go alone.
//
// # What a command gets
//
// On Linux each command runs in new user, mount, PID, IPC, UTS and cgroup
// namespaces: the host's / read-only, the workspace and
// [Config.WritablePaths] writable, [Config.ReadOnlyPaths] read-only even
// under a writable parent, [Config.HiddenPaths] and the credential stores
// of [CredentialStores] unreadable, a private /tmp, a fresh /proc, a
// minimal /dev; [ProtectedNames] guarded in every writable root, with
// [Cmd.Dropped] listing what did not land; the caller's uid with no
// capabilities; only allow-listed environment variables ([Config.Env]);
// resource limits ([Config.Limits], [DefaultLimits], [Cmd.LimitsHit]). The
// network is the host's unless [Config.Network] says [NetworkNone] (only
// loopback) or [NetworkAllow] (only the names of [Config.AllowedDomains],
// through a filtering proxy the caller serves). [Config.Report] has the
// sandbox say what it refused ([Cmd.Report]).
//
// The command's Process is the sandbox's init on the host: signals sent to it
// reach the command, killing it ends every process in the sandbox, and it
// dies with its caller.
//
// What each layer and rung guarantees, and what it does not, is in
// [docs/layers.md], the reference.
//
// # Differences from os/exec
//
// [Cmd] has os/exec's fields and methods with their meaning (Stdin/Stdout/
// Stderr and the *Pipe methods, ExtraFiles, Env and Environ, Dir, Cancel,
// WaitDelay, Process, ProcessState, String). Where it differs, on purpose:
//   - Path is resolved inside the sandbox, at Start: there is no LookPath
//     error before Start and no Err field; String returns Args joined.
//   - Env nil means the sandbox's default environment, not the caller's;
//     a non-nil Env still loses the variables whose names look secret (and
//     proxy URLs their credentials) unless Config.Env names them, so
//     cmd.Env = append(os.Environ(), "X=1") does not hand secrets over.
//   - Process is the sandbox's init, not the command: signals sent to it are
//     forwarded to the command; Kill ends the whole sandbox. Wait releases it
//     (its Pid stays readable; Signal then fails), so no pidfd outlives the
//     command until the garbage collector runs.
//   - When Cancel (by default: kill the sandbox) ended the command, Wait
//     returns the context's error instead of os/exec's "signal: killed"
//     ExitError; ProcessState is set either way, and a command that ended on
//     its own before the kill reports its own status and no context error.
//   - ProcessState describes the command as its init saw it: SysUsage is
//     the command's rusage from wait4 (it and the descendants it waited
//     for), nil only when the sandbox was killed from outside before it
//     could report.
//   - Wait does not wait for the goroutine that copies a non-file Stdin once
//     the sandbox has ended (every process in it is gone, so nothing can
//     read that pipe, and a Read that never returns would hold Wait for
//     ever); os/exec waits for it until WaitDelay. That goroutine ends at
//     its next write; the caller must not read its Stdin concurrently.
//   - No descriptor reaches the command but 0, 1, 2 and ExtraFiles, whether
//     or not the caller's other descriptors are close-on-exec. ExtraFiles
//     may hold no nil entry and at most 250 files (they travel to the
//     sandbox's init in one message).
//   - No SysProcAttr: the sandbox decides credentials, session and
//     namespaces.
//
// # Limitations
//
// The command shares the host's kernel. Not protected: what is not hidden
// can be read; the workspace can be changed (a [Config.Changeset] keeps
// the writes for review); [NetworkAllow] filters names, not what is sent to
// them, and a program that ignores the proxy variables reaches nothing; on
// the landlock rung (no user namespaces) host processes stay visible and a
// protected name the command creates is not guarded; on macOS the sandbox
// is a Seatbelt profile, not yet verified on a Mac. [docs/layers.md] lists
// the rest.
//
// [docs/layers.md]: https://github.com/corralhq/corral/blob/main/docs/layers.md
// [docs/library.md]: https://github.com/corralhq/corral/blob/main/docs/library.md
package corral
