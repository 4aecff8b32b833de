// Package nsjail is corral's Linux backend: it turns a sandbox description
// into namespaces, mounts and a running command.
//
// Three processes take part. The caller (an agent linking corral, or the CLI)
// owns a [Jail] and asks for a sandbox per command. A clone of the binary with
// CLONE_NEWUSER is a full fork of the cloning process, so its cost grows with
// the caller's heap; to keep spawning flat, a library caller has a small
// spawner process (the re-executed binary, started once with a cheap vfork)
// do the clones. The init (PID 1 of the new namespaces, the re-executed binary
// again) receives its description and the command over a SOCK_SEQPACKET
// socket, builds the mount tree, drops privileges on the thread that starts
// the command, reaps every process, forwards signals and reports the exit
// status back.
//
// Nothing secret travels in argv or the environment: the init's environment
// is empty and the command's arrives on the socket.
//
// The caller's end of each socket is the init's lifeline: when the caller
// dies, even by SIGKILL, the socket closes and the init exits, which ends its
// PID namespace and every process in it.
//
// # Violation reports
//
// When a command asks for it ([Command].Report), the init stacks a second
// seccomp filter on the command that stops its write-intent calls in a
// listener the init serves. Each call goes on unchanged at once
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the mount tree and Landlock decide it,
// as without a listener. The listener reads the path the call names, a hint
// since the command owns that memory, and judges it from the sandbox's own
// configured paths (outside the writable ones, read-only, hidden, a
// protected entry); what the policy refuses is recorded when the policy is
// why the call fails, not when it would fail on the host as well (an
// existing name to create, a missing one to remove, the user's own
// permissions: see failsAnyway), repeats counted, at most a few hundred
// distinct entries, and reported with the exit ([Process].Violations) and
// as it is first seen ([Command].OnViolation). A unix socket the C
// library's name service asks for on its own is marked a probe
// ([Violation].Probe).
// The listener never refuses a call, so a misread path can make the report
// wrong, never a write succeed.
//
// # Connections made by the init
//
// In a bare sandbox with [Options].ConnectOnly (Network=allow on the
// landlock rung), Landlock refuses every TCP connect of the command's own,
// and the same listener (loaded then whether or not a report is asked for)
// stops every connect and listen: the init makes a TCP connection itself,
// on the command's socket, only to one of ConnectOnly's addresses, copied
// once out of the command's memory, and refuses the rest. See
// connect_linux.go.
//
// This package is an implementation part of corral, top-level so its
// design can be read and tested on its own. It carries no compatibility
// promise: its API changes with corral's needs. Programs use package
// corral.
package nsjail
