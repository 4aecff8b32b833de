package cli

import (
	"github.com/corralhq/corral"
	"github.com/corralhq/corral/agent"
	"github.com/corralhq/corral/config"
)

// withScope gives cfg the persistent state of --scope KEY; without it, a
// run keeps a fresh /tmp and a read-only home.
func (f *runFlags) withScope(cfg corral.Config) (corral.Config, error) {
	if f.scope == "" {
		if f.stateDir != "" {
			return cfg, configUsageError("--state-dir needs --scope")
		}
		return cfg, nil
	}
	rt, err := agent.New(&config.Config{}, agent.Options{StateDir: f.stateDir})
	if err != nil {
		return cfg, &exitError{code: exitSetup, msg: err.Error()}
	}
	if cfg, err = rt.WithScope(cfg, f.scope); err != nil {
		return cfg, &exitError{code: exitSetup, msg: err.Error()}
	}
	return cfg, nil
}
