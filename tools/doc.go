// Package tools is the tool layer an agent exposes to its model: shell and
// exec commands that run inside a corral sandbox, file access confined to a
// workspace, file attachments, and URL checks for browsing.
//
// # Commands
//
// [Shell] runs `sh -c` and [Exec] runs a program with arguments, both
// through a *corral.Sandbox. What a command may touch is decided by the
// kernel, not by inspecting the command text: there is no list of
// forbidden words to get around with cp, find -exec, heredocs, script files
// or another language's interpreter. The tools keep what the sandbox does
// not cover:
//
//   - the working directory must resolve inside the workspace, which gives
//     the model a plain error instead of a failure from inside the sandbox;
//   - the tools bin directory ([Options.ToolsBin]) comes first on PATH; give
//     it to the sandbox as read-only with [WithToolsBin];
//   - a timeout kills the whole sandbox, with every process the command
//     started;
//   - stdout and stderr are captured with their middle cut out beyond a
//     limit, and a marker saying how many bytes went;
//   - Exec refuses variables that make programs load foreign code, such as
//     LD_PRELOAD or PYTHONPATH ([IsDangerousEnv]), because a sandbox that
//     limits writes does not limit what a program loads from files it can
//     read.
//
// A failed or timed-out command is an output ([ShellOutput.Format] renders
// it for the model); errors are typed values for the cases where nothing
// ran: [*ArgError], [*PathError], [*EnvError], or a wrapped corral error.
//
// # Files
//
// [File] and [SendFile] do their I/O in the calling process, so they apply
// the workspace boundary themselves: a path is canonicalized (through its
// deepest existing ancestor when it does not exist yet), must resolve
// inside the workspace and must not be a symlink, and the I/O goes through
// an os.Root on the workspace. File refuses to write the identity files
// SOUL.md, IDENTITY.md and USER.md. SendFile sends regular files of at most
// 25 MiB.
//
// A sandbox may show the workspace and other host directories at
// destinations of their own (corral.Config.WorkspaceDest and Binds: an
// agent's workspace read-only at /agent, say). The tools built from the
// sandbox ([NewFileFor], [SandboxFile], [Shell], [Exec]) take paths as its
// commands see them: a path inside a destination is the same path inside
// its source, relative paths are the workspace's, and an absolute path
// outside every destination is refused even when it names a workspace file
// on the host, since inside the sandbox it names something else. File
// refuses writes to a read-only bind ("read-only file system") and to a
// bind whose writes a changeset keeps, which it would go around.
//
// [SandboxFile] offers the same operations, and an exact-string edit
// ([ReplaceUnique]: the text must occur once), with the I/O done inside the
// sandbox by small coreutils commands: a path the sandbox hides, keeps
// read-only or protects inside the workspace stays so, a changeset takes
// the writes, and the refusals are the kernel's. Use it where the model
// also has a shell; a File made with NewFile alone does not know the
// sandbox's rules. Both tools built on a sandbox refuse a write to one of
// its protected entries (corral.Sandbox.Protected: git's directory, an
// editor's or agent's configuration, a HEAD) with a [*PlantingError]
// naming it, before anything is written: the sandbox's guard would stage,
// hold or refuse a command's write there, and a tool must not answer
// "done" for content that does not land.
//
// # Tool policy
//
// [Policy] decides by name which tools an agent is offered: allow and deny
// lists with `*` wildcards, deny winning, an empty allow meaning every tool;
// [Layered] resolves an agent's lists over the global ones over
// [DefaultPolicy].
//
// # Browsing
//
// [URLChecker] refuses URLs that are not http or https, that name a cloud
// metadata service, or whose host resolves to an address that is not public
// (every IANA special-purpose range: loopback, private, link-local,
// carrier-grade NAT, documentation, ...; multicast, broadcast, unspecified;
// an address of the host's own interfaces; and IPv4 addresses in IPv6
// forms). [DialControl] and [NewTransport] check the address each
// connection actually dials.
//
// # Unsandboxed helpers
//
// [UnsandboxedShell], [UnsandboxedExec], [UnsandboxedReadFile],
// [UnsandboxedWriteFile] and [UnsandboxedListDir] are for the system's own
// work. They bypass every boundary and must never be offered to a model.
//
// # Limitations
//
//   - The sandbox controls writes, hidden paths and the environment; it does
//     not stop a command from reading what is readable. Keep secrets out of
//     the environment (corral's default) and in corral.Config.HiddenPaths,
//     and scan tool output for leaks before the model sees it.
//   - Checking a URL before fetching it does not stop DNS rebinding: the
//     name is resolved again for the fetch, and a hostile DNS server can
//     answer differently. Only a dialer that checks the address it connects
//     to ([DialControl], [NewTransport]) closes that gap. A headless browser
//     resolves names itself, so route it through a proxy that uses
//     DialControl, or give it no route to internal networks.
//   - Sandboxed commands keep network access unless the sandbox is created
//     with corral.NetworkNone.
//   - Protected identity files are an application rule of File, not a
//     security boundary: a sandboxed shell can write them unless they are in
//     corral.Config.ReadOnlyPaths.
package tools
