package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/config"
)

// configHelp is the paragraph of `run --help` about --config.
const configHelp = `With --config FILE the sandbox starts from an agent's settings in that TOML
file; --agent ID picks the agent and may be left out when the file has only
one. Flags given on the command line win: --workspace, --net, --fallback,
--changeset, --allow-unix-sockets, --allow-home, --proxy-connections and the
limit flags (--memory, --pids...) replace the file's values,
--writable, --changeset-writable, --read-only, --hide, --reveal, --protect, --env,
--allow-domain, --deny-domain and --allow-ip add to its lists. The file itself is read-only to the command.
The agent's workspace_access and zones apply as in every entry point: "ro"
keeps the workspace read-only, each declared zone is shown at /NAME (one whose
changes need review needs a changeset), and "none", which needs a workspace of
the sandbox's own, is refused outside 'corral mcp --session'.
A file that cannot be read, parse or validate, or that lacks the agent, is a
usage error (exit 2), and so is a path in it that cannot be used, named by
the file and its key.`

// registerConfig adds --config and --agent. It keeps cmd to tell the flags
// given on the command line from their defaults.
func (f *runFlags) registerConfig(cmd *cobra.Command) {
	f.cmd = cmd
	fl := cmd.Flags()
	fl.StringVar(&f.configFile, "config", "",
		"start from an agent's sandbox in the TOML `FILE`: --workspace and --net given here replace its values, --writable, --changeset-writable, --read-only, --hide and --env add to them")
	fl.StringVar(&f.agent, "agent", "", "the `ID` of the [[agents]] entry to use from --config (optional when the file has one agent)")
}

// withConfigFile lays the agent's sandbox from --config under fromFlags,
// the Config built from the command line: what the file holds fills in
// what the command line did not say, and lists are the file's followed by
// the flags'. Everything else in fromFlags passes through untouched.
func (f *runFlags) withConfigFile(fromFlags corral.Config) (corral.Config, error) {
	if f.configFile == "" {
		if f.agent != "" {
			return corral.Config{}, configUsageError("--agent needs --config")
		}
		return fromFlags, nil
	}
	doc, agent, err := loadConfig(f.configFile, f.agent)
	if err != nil {
		return corral.Config{}, err
	}
	file := agent.Sandbox.CorralConfig()
	cfg := fromFlags
	if cfg.Mode == "" {
		cfg.Mode = file.Mode
	}
	if !f.given("workspace") && file.Workspace != "" {
		cfg.Workspace = file.Workspace
	}
	if !f.given("net") {
		cfg.Network = file.Network
	}
	if !f.given("fallback") {
		cfg.Fallback = file.Fallback
	}
	if !f.given("changeset") {
		cfg.Changeset = file.Changeset
	}
	if !f.given("allow-unix-sockets") {
		cfg.AllowUnixSockets = file.AllowUnixSockets
	}
	if !f.given("allow-home") {
		cfg.AllowHome = file.AllowHome
	}
	cfg.AllowPtrace = file.AllowPtrace
	if !f.given("proxy-connections") {
		cfg.ProxyConnections = file.ProxyConnections
	}
	cfg.Limits = file.Limits.Merge(fromFlags.Limits)
	cfg.WritablePaths = append(file.WritablePaths, fromFlags.WritablePaths...)
	cfg.ChangesetPaths = append(file.ChangesetPaths, fromFlags.ChangesetPaths...)
	cfg.ReadOnlyPaths = append(file.ReadOnlyPaths, fromFlags.ReadOnlyPaths...)
	cfg.HiddenPaths = append(file.HiddenPaths, fromFlags.HiddenPaths...)
	cfg.Env = append(file.Env, fromFlags.Env...)
	cfg.AllowPlanting = append(file.AllowPlanting, fromFlags.AllowPlanting...)
	cfg.Reveal = append(file.Reveal, fromFlags.Reveal...)
	cfg.Protect = append(file.Protect, fromFlags.Protect...)
	cfg.AllowedDomains = append(file.AllowedDomains, fromFlags.AllowedDomains...)
	cfg.DeniedDomains = append(file.DeniedDomains, fromFlags.DeniedDomains...)
	cfg.AllowedIPs = append(file.AllowedIPs, fromFlags.AllowedIPs...)
	cfg.HostPorts = append(file.HostPorts, fromFlags.HostPorts...)
	cfg.Publish = append(file.Publish, fromFlags.Publish...)
	cfg.PublishAny = cfg.PublishAny || file.PublishAny
	cfg.Binds = append(file.Binds, fromFlags.Binds...)
	cfg.Secrets = append(file.Secrets, fromFlags.Secrets...)
	// The file stays read-only to every command it configures.
	cfg.PolicyFiles = append(file.PolicyFiles, fromFlags.PolicyFiles...)
	return f.applyAgent(doc, agent, cfg)
}

// applyAgent resolves the rest of the agent's table over cfg as every
// entry point does (config.Config.SandboxConfig): workspace_access and
// zones. What a sandbox made for one command cannot give is refused by
// name. f keeps what the tools must know of it (mcp's).
func (f *runFlags) applyAgent(doc *config.Config, agent config.Agent, cfg corral.Config) (corral.Config, error) {
	st, err := doc.SandboxConfig(agent.ID, cfg, "")
	if err != nil {
		hint := ""
		if len(agent.Sandbox.Zones) > 0 && cfg.Changeset == "" {
			hint = ", or --changeset DIR"
		}
		return corral.Config{}, configUsageError("%s: %v%s", f.configFile, err, hint)
	}
	f.start = &st
	return st.Config, nil
}

func (f *runFlags) given(name string) bool {
	return f.cmd != nil && f.cmd.Flags().Changed(name)
}

// loadAgent reads file and picks the agent id, or the only agent when id is
// empty.
func loadAgent(file, id string) (config.Agent, error) {
	_, a, err := loadConfig(file, id)
	return a, err
}

// loadConfig reads file and picks the agent id, or the only agent when id
// is empty.
func loadConfig(file, id string) (*config.Config, config.Agent, error) {
	cfg, err := config.Load(file)
	if err != nil {
		return nil, config.Agent{}, configUsageError("%v", err)
	}
	a, err := pickAgent(cfg, file, id)
	return cfg, a, err
}

func pickAgent(cfg *config.Config, file, id string) (config.Agent, error) {
	ids := strings.Join(cfg.IDs(), ", ")
	switch {
	case id != "":
		if a, ok := cfg.Agent(id); ok {
			return a, nil
		}
		return config.Agent{}, configUsageError("%s: no agent %q; the file defines %s", file, id, ids)
	case len(cfg.Agents) == 1:
		return cfg.Agents[0], nil
	}
	return config.Agent{}, configUsageError("%s defines %d agents (%s); choose one with --agent", file, len(cfg.Agents), ids)
}

// configUsageError is a one-line usage error, without the hint to run
// `corral help` that flag parsing errors get: the message already says
// what to fix.
func configUsageError(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}
