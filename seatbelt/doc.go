// Package seatbelt generates the macOS Seatbelt (SBPL) profile a sandboxed
// command runs under, and names the program that applies it.
//
// Generation is pure Go and builds on every OS, so profiles are unit-tested
// (golden files, a well-formedness checker) on Linux as well; only applying
// one needs a Mac. A [Runner] (every unix; tested on Linux with a stand-in
// for sandbox-exec) runs each command through [SandboxExec] under a
// profile of its own, with a private temporary directory; [Workdir] and
// [LookPath] find the command's directory and executable as the command
// itself would, hidden paths counted as missing. The darwin backend of the
// corral package is a thin adapter over them.
//
// # Parameters, never paths
//
// No configured path ever appears in the profile text. Each one is passed to
// sandbox-exec as a parameter (-DNAME=VALUE) and the profile refers to it as
// (param "NAME"), so a path holding quotes, parentheses, backslashes or
// newlines cannot change the profile's meaning: there is nothing to escape.
//
//	p, err := seatbelt.Generate(seatbelt.Input{
//		Workspace: "/private/tmp/ws",
//		TempDir:   "/private/var/folders/xy/abc/T/corral-1",
//	})
//	if err != nil {
//		return err
//	}
//	cmd := exec.Command(seatbelt.SandboxExec, p.Command("/bin/sh", "-c", "make")...)
//
// # What the profile allows
//
// Everything is denied by default. Processes may exec and fork, and may
// signal and inspect only processes of the same sandbox. Every file is
// readable except hidden paths; writable are the workspace, the writable
// paths and the command's own temporary directory. Inside those, read-only
// paths and the protected code-planting paths (git hooks and config, shell
// startup files, editor task files) stay read-only, and neither they nor any
// directory above them inside a writable root can be removed or renamed, so
// they cannot be moved aside and replaced. Hard links and clones are never
// allowed, since either would give a protected or hidden file a second,
// writable or readable name. A short list of sysctls, Mach services and
// devices that ordinary command-line tools need is allowed; see rules.go.
//
// Rules are emitted most general first and most specific last, because in
// SBPL the last matching rule wins: a read-only path inside a writable root
// is emitted after the root, as the Linux mount plan mounts it after.
//
// # Network
//
// With host networking the command may use IP freely and reach the system's
// DNS resolver socket. With no network it may use no IP at all, not even
// loopback: unlike a Linux network namespace, the loopback interface here is
// the host's own. In both modes the only unix sockets it may bind or connect
// to lie in its private temporary directory: its own, or a proxy's that the
// caller places there. Host unix sockets (the ssh agent, Docker) stay out of
// reach.
//
// # Limitations
//
//   - Paths must be canonical on the machine that applies the profile:
//     Seatbelt matches the resolved path of every access. Generate rewrites
//     the /tmp, /var and /etc aliases to their /private targets; resolving
//     other symlinks is the caller's job (corral.New does it).
//   - Protected paths are decided when the profile is generated: see
//     [LocateProtected].
//   - Seatbelt matches paths byte for byte, while the default macOS file
//     system ignores case; see docs/macos.md for what has been verified on
//     a Mac and what has not.
package seatbelt

// SandboxExec applies a profile and then executes a command. It is always
// run by this absolute path, never looked up in PATH.
const SandboxExec = "/usr/bin/sandbox-exec"
