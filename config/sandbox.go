package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/zones"
)

// Destinations of a persistent sandbox's own workspace and, with
// workspace_access "ro", of the agent's.
const (
	OwnWorkspaceDir   = "/workspace"
	AgentWorkspaceDir = "/agent"
)

// Start is an agent's sandbox as every entry point builds it: the library
// configuration, and what the tools must know of it.
type Start struct {
	// Config is what corral.New is to get.
	Config corral.Config
	// Zones is the agent's access to the zones it declares, shown to its
	// commands at /NAME; nil when it declares none. The file tools act on
	// them instead of the workspace.
	Zones *zones.Access
	// ReadOnly says the agent's workspace is the model's to read only
	// (workspace_access "ro"): no tool that writes files is offered.
	ReadOnly bool
}

// SandboxConfig resolves agent id's sandbox table over base, the
// configuration an entry point made of the table (Sandbox.CorralConfig,
// with the command line's flags over it and a workspace when the table
// names none): workspace_access, then the zones the agent declares. It is
// the one resolution `corral run`, `corral mcp`, `corral profile`,
// `corral preflight` and the agent runtime apply, so that one file means
// one sandbox in each; what an entry point cannot give is refused here,
// by name.
//
// own is the sandbox's own workspace, a directory of a persistent
// sandbox's state, or "" for a sandbox made for one use. With own,
// "ro" shows own at /workspace and the agent's workspace read-only at
// /agent, and "none" shows own only, the agent's hidden. Without it, "ro"
// keeps the agent's workspace read-only to every command, and "none",
// which needs a workspace of the sandbox's own, is refused.
//
// A zone whose changes need review keeps commands' writes in base's
// Changeset; without one the agent is refused, naming the zone.
func (c *Config) SandboxConfig(id string, base corral.Config, own string) (Start, error) {
	a, ok := c.Agent(id)
	if !ok {
		return Start{}, fmt.Errorf("no agent %q in %s", id, c.File)
	}
	st := Start{Config: base, ReadOnly: a.Sandbox.WorkspaceAccess == AccessRO}
	if err := st.workspaceAccess(a, own); err != nil {
		return Start{}, err
	}
	if len(a.Sandbox.Zones) == 0 {
		return st, nil
	}
	access, err := c.Access(id)
	if err != nil {
		return Start{}, &AgentError{Agent: id, Key: "zones", Err: err}
	}
	if st.Config, err = access.SandboxConfig(st.Config, c.Zones, st.Config.Changeset); err != nil {
		return Start{}, &AgentError{Agent: id, Key: "zones", Err: fmt.Errorf("%w (changeset = \"DIR\" in its sandbox table)", err)}
	}
	st.Zones = access
	return st, nil
}

// workspaceAccess applies the agent's workspace_access to st.Config.
func (st *Start) workspaceAccess(a Agent, own string) error {
	cfg := &st.Config
	ws := cfg.Workspace
	switch a.Sandbox.WorkspaceAccess {
	case AccessRO:
		if own == "" {
			// The agent's workspace is the model's to read, not to
			// write: not through the tools, nor through a command.
			cfg.ReadOnlyPaths = append(cfg.ReadOnlyPaths, ws)
			return nil
		}
		cfg.Workspace, cfg.WorkspaceDest = own, OwnWorkspaceDir
		cfg.Binds = append(cfg.Binds, corral.Bind{Source: ws, Dest: AgentWorkspaceDir, ReadOnly: true})
	case AccessNone:
		if own == "" {
			return &AgentError{Agent: a.ID, Key: "workspace_access", Err: errors.New(`"none" gives the sandbox a workspace of its own, which only a session's persistent sandbox has (corral mcp --session KEY, the agent runtime)`)}
		}
		cfg.Workspace, cfg.WorkspaceDest = own, OwnWorkspaceDir
		if _, err := os.Stat(ws); err == nil {
			cfg.HiddenPaths = append(cfg.HiddenPaths, ws)
		}
	}
	return nil
}

// AgentError is a key of an agent's sandbox table that the sandbox asked
// for cannot be given as the file says.
type AgentError struct {
	Agent string
	Key   string // "workspace_access", "zones"
	Err   error
}

func (e *AgentError) Error() string { return "agent " + e.Agent + ": " + e.Key + ": " + e.Err.Error() }

func (e *AgentError) Unwrap() error { return e.Err }
