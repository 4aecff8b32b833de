package agent

import (
	"context"
	"fmt"
	"os"

	"github.com/corralhq/corral"
)

// Learn runs name with args once in learning mode under agent agentID's
// sandbox settings (corral.Learn: nothing it does lands, every refusal is
// recorded) and returns the policy that lets it run. The learned entries
// go into the config file with Learned.MergeInto(doc, agentID). The run
// uses no persistent state of the agent: its home is layered afresh.
func (rt *Runtime) Learn(ctx context.Context, agentID, name string, args ...string) (*corral.Learned, error) {
	a, ok := rt.cfg.Agent(agentID)
	if !ok {
		return nil, fmt.Errorf("no agent %q", agentID)
	}
	ws, err := rt.agentWorkspace(a)
	if err != nil {
		return nil, err
	}
	base := a.Sandbox.CorralConfig()
	base.Workspace = ws
	st, err := rt.cfg.SandboxConfig(a.ID, base, ws)
	if err != nil {
		return nil, err
	}
	cfg := st.Config
	if _, err := os.Stat(rt.state); err == nil {
		cfg.HiddenPaths = append(cfg.HiddenPaths, rt.state)
	}
	rt.adjust(&cfg)
	return corral.Learn(ctx, cfg, name, args...)
}
