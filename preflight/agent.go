package preflight

import (
	"context"
	"fmt"
	"strings"

	"github.com/corralhq/corral/config"
)

// Agent runs the preflight of agent id (may be "" when the file has one)
// in the config file: its sandbox
// table, with workspace when the file leaves the workspace to the program,
// and its zones. A file that does not load or validate, or lacks the
// agent, fails the "config" check.
func Agent(ctx context.Context, file, id, workspace string, checks ...Check) *Report {
	spec, err := AgentSpec(file, id, workspace)
	if err != nil {
		r := &Report{}
		r.add("config", err)
		return r
	}
	spec.Checks = checks
	return Run(ctx, spec)
}

// AgentSpec is the Spec of agent id in the config file.
func AgentSpec(file, id, workspace string) (Spec, error) {
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
	access, err := cfg.Access(id)
	if err != nil {
		return Spec{}, err
	}
	c := a.Sandbox.CorralConfig()
	if c.Workspace == "" {
		c.Workspace = workspace
	}
	return Spec{Config: c, Access: access, Project: cfg.Zones}, nil
}
