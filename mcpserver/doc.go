// Package mcpserver serves corral's sandboxed tools over the Model Context
// Protocol, so that an agent not written in Go (Claude Code, Codex, Cursor,
// a Python agent) takes its shell and file tools from corral. `corral mcp`
// (the corral-mcp binary, cmd/corral-mcp) is this package behind a command
// line.
//
//	sb, err := corral.New(cfg)
//	...
//	srv, err := mcpserver.New(sb, mcpserver.Options{Policy: policy})
//	...
//	defer srv.Close()
//	err = srv.Run(ctx, mcpserver.NewStdioTransport())
//
// # Tools
//
// shell (a command line run with `sh -c`), exec (a program and its
// arguments), read_file, write_file, edit_file (an exact-string replace that
// must match once), list_files and, when the sandbox writes to a
// changeset, changes (its list or diff). Each is a thin mapping onto
// package tools: [tools.Shell], [tools.Exec] and [tools.SandboxFile],
// whose file I/O runs inside the sandbox too, so a hidden, read-only or
// protected path inside the workspace stays so and a changeset gets the
// writes; a write to a protected entry (.git/config, .mcp.json...) is an
// error result naming the rule, never "Wrote N bytes". With [Options.Files] set to [ZoneFiles], the file tools act on
// an agent's zones instead (/NAME/..., see package zones), in-process
// through the zones' modes and approvals; with [ElicitApprover] as the
// zones' approver, a change that needs approval is asked of the client's
// user through MCP elicitation. A call's arguments are checked against the JSON schema inferred
// from the tool's input type (required, unknown and mistyped properties
// are an error result naming them) and decoded with encoding/json. [Options.Policy] removes tools from the list (and refuses calls
// to them), and [Options.ReadOnly] removes write_file and edit_file.
//
// # Leak guard
//
// Every tools/call passes [hooks.LeakGuard]'s scanner: a call whose name or
// arguments hold a secret is refused with the reason, before anything runs;
// a result that holds one has the lines redacted ([hooks.Redact]) and is
// marked as an error. Neither ever repeats the secret.
//
// # Lifetime
//
// One Server holds one *corral.Sandbox, built once by the caller, and is
// safe for concurrent calls. A call the client cancels has its context
// cancelled, which kills its sandbox and everything the command started.
// [Server.Close], and the end of [Server.Run] (for stdio: end of file on
// stdin), cancel every call still running. [StdioTransport] answers a
// line that is no message (not JSON, an id that is not a string or number,
// nesting too deep, a batch, a line over 16 MiB) with a JSON-RPC error and
// reads on, where the SDK's stdio transport ends the session and with it
// the calls in flight.
//
// # Limitations
//
//   - list_files runs GNU find inside the sandbox; without it (macOS's
//     find) the tool fails.
//   - ZoneFiles asks the client's user about a change a zone holds for
//     approval ("ask") only when its zones.FS has [ElicitApprover] (as
//     `corral mcp` gives it), and the client declares the elicitation
//     capability; otherwise the change is refused. It reads the zones as
//     they are on the host, not what commands left waiting in the
//     changeset.
//   - write_file rewrites a file in place; edit_file reads, replaces and
//     writes, so a change made to the file between the two is lost.
package mcpserver
