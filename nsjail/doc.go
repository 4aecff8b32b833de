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
// This package is an implementation part of corral, top-level so its
// design can be read and tested on its own. It carries no compatibility
// promise: its API changes with corral's needs. Programs use package
// corral.
package nsjail
