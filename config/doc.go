// Package config reads an agent program's TOML config file: one
// [[agents]] entry per agent, each with the sandbox its commands run in.
//
//	[defaults.sandbox]          # what every agent's [agents.sandbox] starts from
//	network = "none"
//
//	[[agents]]
//	id = "coder"
//	main_session = "main"       # the session mode "non-main" leaves on the host
//
//	[agents.sandbox]
//	mode = "all"                # "off", "non-main" or "all"; "enabled" and "disabled" are aliases of "all" and "off"
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
//	protect = ["tools/hooks", "nbstripout.py"] # guarded like corral.ProtectedNames
//	allow_unix_sockets = false  # true: commands may create unix sockets
//	allow_ptrace = false        # true: commands may trace their own processes
//	changeset = "changes/coder" # optional: workspace writes kept here for review
//	changeset_paths = ["/srv/cache"] # writable paths whose writes it keeps too
//	scope = "session"           # persistent sandboxes (package agent): "session", "agent" or "shared"
//	workspace_access = "rw"     # "none", "ro" (the agent's at /agent) or "rw"
//	bootstrap_files = ["AGENTS.md"] # copied into a sandbox's own workspace
//	state_dir = "/var/lib/corral"   # default $XDG_STATE_HOME/corral
//	persist_home = true         # a writable home layered over the host's
//	prune_idle = "24h"          # remove a sandbox unused this long ("0": never)
//	prune_max_age = "168h"      # or this old
//	media_dir = "/srv/inbound"  # where inbound media may be copied from
//	binds = [{source = "/srv/data", dest = "/data", read_only = true}] # shown at another path
//	real_paths_fallback = false # true: without a mount namespace (landlock rung), show
//	                            # the workspace and binds at their host paths instead of failing
//	secrets = [{ name = "GITHUB_TOKEN", domains = ["api.github.com"], from = "env:GITHUB_TOKEN" }]
//	                            # network = "allow": commands hold a placeholder, the proxy adds
//	                            # the value for these domains; from "env:VAR" (default) or "file:/path"
//
//	[agents.tools]              # which tools the agent is offered (see [Tools])
//	allow = ["*_file", "shell"] # '*' matches any run of characters; empty: all
//	deny = ["write_file"]       # deny wins over allow
//
// A [defaults.tools] table before the agents gives the tool policy of every
// agent that does not set a list itself: each of allow and deny comes from
// the agent's table when it has that key (an empty list included), else
// from [defaults.tools].
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
// [Config.Access] resolves an agent's declarations into its zones.Access.
//
// A table or key left out takes its default: mode "all", network "host",
// fallback "fail", scope "session", workspace_access "rw", persist_home
// true, prune after 24h idle or 168h, no workspace, no changeset, false
// switches, empty lists. The defaults are set in one place, so every
// program reading the file agrees on them.
//
// # Two levels
//
// [defaults.sandbox] holds the same keys as [agents.sandbox]. For each
// agent, a key its table sets wins over the default table's, which wins
// over the built-in default; env and the path lists (writable_paths,
// read_only_paths, hidden_paths, reveal, changeset_paths, allow_planting,
// protect, bootstrap_files, binds, secrets) are the default table's followed by the agent's;
// zones, a declaration, is replaced whole by an agent's own list, even an
// empty one. An error in [defaults.sandbox] names its own key and line.
//
// # Loading
//
// [Load] reads a file once; [Sandbox.CorralConfig] turns an agent's sandbox
// into a corral.Config for corral.New:
//
//	cfg, err := config.Load("agents.toml")
//	if err != nil {
//		return err // agents.toml:7: agents[0].sandbox.scope: "team" is not a scope; want "session", "agent" or "shared"
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
