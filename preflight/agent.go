package preflight

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/corralhq/corral/config"
)

// Agent runs the preflight of agent id (may be "" when the file has one)
// in the config file: its sandbox
// table, with workspace when the file leaves the workspace to the program,
// and its zones. A file that does not load or validate, or lacks the
// agent, fails the "config" check.
func Agent(ctx context.Context, file, id, workspace string, checks ...Check) *Report {
	return AgentWith(ctx, AgentOptions{File: file, ID: id, Workspace: workspace, Checks: checks})
}

// AgentOptions name the agent AgentWith checks, and what its program gives
// it besides its file.
type AgentOptions struct {
	File, ID  string
	Workspace string // when the file leaves it to the program
	// Changeset is the changeset directory the program gives the agent
	// (corral mcp --changeset) when its file names none.
	Changeset string
	Checks    []Check
}

// AgentWith is Agent with a changeset the program gives.
func AgentWith(ctx context.Context, o AgentOptions) *Report {
	spec, err := agentSpec(o)
	if err != nil {
		r := &Report{}
		r.add("config", err)
		return r
	}
	spec.Checks = o.Checks
	return Run(ctx, spec)
}

// AgentSpec is the Spec of agent id in the config file.
func AgentSpec(file, id, workspace string) (Spec, error) {
	return agentSpec(AgentOptions{File: file, ID: id, Workspace: workspace})
}

func agentSpec(o AgentOptions) (Spec, error) {
	file, id, workspace := o.File, o.ID, o.Workspace
	cfg, err := config.Load(file)
	if err != nil {
		return Spec{}, err
	}
	if id == "" && len(cfg.Agents) == 1 {
		id = cfg.Agents[0].ID
	}
	a, ok := cfg.Agent(id)
	if !ok && id == "" {
		return Spec{}, fmt.Errorf("%s defines %d agents (%s); name one", file, len(cfg.Agents), strings.Join(cfg.IDs(), ", "))
	}
	if !ok {
		return Spec{}, fmt.Errorf("%s: no agent %q; the file defines %s", file, id, strings.Join(cfg.IDs(), ", "))
	}
	c := a.Sandbox.CorralConfig()
	if c.Workspace == "" {
		c.Workspace = workspace
	}
	if c.Changeset == "" {
		c.Changeset = o.Changeset
	}
	// The agent is resolved as every entry point resolves it, so that
	// preflight fails exactly when it cannot start: a zone whose changes
	// need review with no changeset named, say. An agent with
	// workspace_access "none" starts only in a persistent sandbox, whose
	// own workspace a stand-in takes the place of.
	own := ""
	if a.Sandbox.WorkspaceAccess == config.AccessNone {
		own = filepath.Join(os.TempDir(), "corral-preflight-workspace")
		if err := os.MkdirAll(own, 0o700); err != nil {
			return Spec{}, err
		}
	}
	st, err := cfg.SandboxConfig(id, c, own)
	if err != nil {
		// The other checks still run, on the table as written.
		access, aerr := cfg.Access(id)
		if aerr != nil {
			return Spec{}, aerr
		}
		return Spec{Config: c, Access: access, Project: cfg.Zones, Refused: err}, nil
	}
	return Spec{Config: st.Config, Access: st.Zones, Project: cfg.Zones, ZonesShown: st.Zones != nil}, nil
}
