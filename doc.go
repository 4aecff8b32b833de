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
// can have its sandboxes' init run from a corral CLI binary of the same
// version instead of itself: [Config.Helper], or the environment variable
// CORRAL_HELPER.
//
// Building needs no C library: the seccomp filters come generated ahead
// and embedded, so a build with or without cgo works on any Linux machine
// with Go alone.
//
// # What a command gets
//
// On Linux each command runs in new user, mount, PID, IPC, UTS and cgroup
// namespaces. The network is the host's by default ([NetworkHost]);
// [NetworkNone] and [NetworkAllow] give a network namespace with only
// loopback, and with NetworkAllow the command reaches the names of
// [Config.AllowedDomains] through corral's filtering proxy, served by the
// caller. What a command gets:
//   - the host's / read-only, every submount included (the caller's home
//     too, so caches written there do not persist unless
//     [Config.PersistHome] layers a home over it); a fresh /proc; a
//     minimal /dev; a private /tmp, empty at each command unless
//     [Config.PersistTmp] keeps one;
//   - the workspace and [Config.WritablePaths] writable, [Config.ReadOnlyPaths]
//     read-only even under a writable parent, [Config.HiddenPaths] unreadable;
//     where paths nest, the most specific one wins;
//   - [ProtectedNames] guarded inside writable roots: each repository's
//     .git staged while the command runs and merged back through an
//     allowlist when it exits (ordinary git work lands, hooks and config
//     that runs programs do not), the others read-only, and new or
//     replaced ones moved into the root's .corral-held directory at exit;
//     [Cmd.Dropped] lists what did not land;
//   - the caller's uid and gid, no capabilities, no_new_privs, a new session,
//     no way to create namespaces;
//   - only allow-listed environment variables (see [Config.Env]); with
//     [NetworkAllow] the proxy variables name the sandbox's proxy;
//   - resource limits ([Config.Limits], [DefaultLimits]): a 1 GiB /tmp and
//     /dev/shm, at most 4096 tasks, and what the Config asks for;
//     [Cmd.LimitsHit] says which ones the command ran into.
//
// The command's Process is the sandbox's init on the host: signals sent to it
// reach the command, killing it ends every process in the sandbox, and it
// dies with its caller.
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
//   - On the landlock rung a protected name the command creates is not
//     guarded at all, and .git at the top of a writable root is read-only
//     there.
//   - [NetworkAllow] filters by name at the proxy: a program that ignores
//     the proxy variables reaches nothing, and what is allowed is a name,
//     not what is sent to it.
//   - On macOS the sandbox is a Seatbelt profile, with different guarantees.
package corral
