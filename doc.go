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
// # What a command gets
//
// On Linux each command runs in new user, mount and PID namespaces (and a
// network namespace with only loopback for [NetworkNone]):
//   - the host's / read-only, every submount included; a fresh /proc; a
//     minimal /dev; a private /tmp;
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
//   - only allow-listed environment variables (see [Config.Env]).
//
// The command's Process is the sandbox's init on the host: signals sent to it
// reach the command, killing it ends every process in the sandbox, and it
// dies with its caller.
//
// # Limitations
//
//   - A protected name the command creates is visible on the host until
//     the command exits; on the landlock rung it is not guarded at all,
//     and .git at the top of a writable root is read-only there.
//   - The network is either the host's or none; there is no filtering proxy.
//   - On macOS the sandbox is a Seatbelt profile, with different guarantees.
package corral
