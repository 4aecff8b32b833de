// Package config reads an agent program's TOML config file: one
// [[agents]] entry per agent, each with the sandbox its commands run in.
//
//	[[agents]]
//	id = "coder"
//
//	[agents.sandbox]
//	mode = "enabled"            # or "disabled": full host access
//	workspace = "work/coder"    # optional: the program may derive it from the id
//	writable_paths = ["/srv/cache"]
//	read_only_paths = ["work/coder/.data"]
//	hidden_paths = ["/srv/keys"]
//	reveal = ["/home/me/.aws"]  # credential stores left readable (hidden by default)
//	allow_home = false          # true: the workspace may be the home directory
//	network = "host"            # or "none"
//	fallback = "fail"           # or "warn": run weaker when the host cannot contain
//	env = ["GOPATH", "CI=1"]    # KEY copies the caller's value, KEY=VALUE sets one
//	allow_planting = [".git/hooks"]
//	allow_unix_sockets = false  # true: commands may create unix sockets
//	allow_ptrace = false        # true: commands may trace their own processes
//	changeset = "changes/coder" # optional: workspace writes kept here for review
//	changeset_paths = ["/srv/cache"] # writable paths whose writes it keeps too
//
// Zones are named directories the project offers its agents (package
// zones): each agent declares the ones it needs, no more than the project
// gives; an agent that declares none gets no file access through them.
// Without any [zones.NAME] table the project has two, cache and workspace,
// in .sandbox/ next to the file, both "rw".
//
//	[zones.data]
//	path = "data"               # relative to the file's directory
//	mode = "rw"                 # or "ro" (the default)
//	approval = { write = "ask", delete = "blocked" } # or "preApproved"; "ask" by default
//
//	[[agents]]
//	id = "formatter"
//	[agents.sandbox]
//	zones = [{ name = "data", mode = "rw" }] # approval may be stricter, never looser
//
// [Config.Access] resolves an agent's declarations into its zones.Access. A
// [defaults.sandbox] table may declare zones too; an agent's own list,
// even an empty one, replaces it whole.
//
// A table or key left out takes its default: mode "enabled", network
// "host", fallback "fail", no workspace, no changeset, false switches,
// empty lists. The defaults are set
// in one place, so every program reading the file agrees on them.
//
// # Loading
//
// [Load] reads a file once; [Sandbox.CorralConfig] turns an agent's sandbox
// into a corral.Config for corral.New:
//
//	cfg, err := config.Load("agents.toml")
//	if err != nil {
//		return err // agents.toml:7: agents[0].sandbox.mode: "on" is not a mode; want "enabled" or "disabled"
//	}
//	agent, ok := cfg.Agent("coder")
//	if !ok {
//		return fmt.Errorf("no agent coder in %s", cfg.File)
//	}
//	sb, err := corral.New(agent.Sandbox.CorralConfig())
//
// # Rules
//
//   - Unknown keys are errors, so a misspelt key cannot silently fall back to
//     a default. So are values of the wrong type or outside their set.
//   - Every error is an [*Error] naming the file, the line and the key's full
//     path with array indices.
//   - Every agent needs an id, unique in the file, made of letters, digits,
//     '.', '_' and '-'.
//   - Relative paths are resolved against the directory holding the config
//     file, not the current directory, so the file means the same wherever
//     the program starts. "~" is not expanded. Whether a path exists is
//     checked by corral.New, not here.
//
// # Hot reload
//
// [Watch] keeps a [Runtime] whose Config is replaced, atomically and whole,
// when the file changes. An edit that does not parse keeps the previous
// Config and is reported through the logf the program passes in. A program
// holding a corral.Sandbox built from an older Config compares pointers and
// rebuilds it when the Config changed.
//
// # The file is read-only to its sandboxes
//
// A Config from [Load] or [Watch] records the file in each
// [Sandbox.ConfigFile], and [Sandbox.CorralConfig] lists it in
// corral.Config.PolicyFiles: every sandbox built from it keeps the file
// read-only, even when it lies in the workspace, so that no command can
// rewrite, replace or remove the policy the next ones (or the next reload)
// run under. A config from [Parse] names no file.
//
// # Limitations
//
// Reload notices changes through the directory holding the file (and the
// real file's, when the path is a symlink as it was at start); on
// filesystems without change notification (many network filesystems) edits
// are not seen until the program restarts. Commands already running keep
// the sandbox they started in.
package config
