package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/agent"
	"github.com/corralhq/corral/browser"
	"github.com/corralhq/corral/config"
)

// sessionFlags are the flags --session takes besides its own: the sandbox
// is the agent runtime's, made from the file alone.
var sessionFlags = map[string]bool{
	"config": true, "agent": true, "session": true, "workspace": true, "state-dir": true,
	"timeout": true, "http": true, "read-only-tools": true, "browser": true,
}

// sessionUsage refuses --session without --config, and with the flags
// that would shape a sandbox the file already decides.
func sessionUsage(f *runFlags) error {
	if f.configFile == "" {
		return usageError("--session needs --config: the agent's file decides its sessions' sandboxes")
	}
	var bad []string
	f.cmd.Flags().Visit(func(fl *pflag.Flag) {
		if !sessionFlags[fl.Name] {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		return usageError("%s: not with --session; the agent's sandbox comes from --config %s", strings.Join(bad, ", "), f.configFile)
	}
	return nil
}

// sessionSandbox is the sandbox of --config's agent's session key, as the
// agent runtime resolves it: the persistent sandbox of the scope the file
// names, built here (or taken over from its state) once for the server.
func sessionSandbox(f *runFlags, session string) (*mcpSandbox, error) {
	file, err := config.Load(f.configFile)
	if err != nil {
		return nil, configUsageError("%v", err)
	}
	a, err := loadAgent(f.configFile, f.agent)
	if err != nil {
		return nil, err
	}
	ws, err := sessionWorkspace(f)
	if err != nil {
		return nil, err
	}
	rt, err := agent.New(file, agent.Options{
		StateDir:  f.stateDir,
		Workspace: func(string) string { return ws },
		Adjust: func(c *corral.Config) {
			c.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
			*c = withInitHelper(*c)
		},
	})
	if err != nil {
		return nil, &exitError{code: exitSetup, msg: err.Error()}
	}
	res, err := rt.Resolve(a.ID, session)
	switch {
	case err != nil:
		return nil, configUsageError("%v", err)
	case !res.Sandboxed:
		return nil, configUsageError("%s: agent %s runs session %q unsandboxed (mode = %q); corral mcp serves only sandboxed tools",
			f.configFile, a.ID, session, a.Sandbox.Sessions)
	}
	closeInherited()
	s, err := rt.Session(a.ID, session)
	var ae *config.AgentError
	switch {
	case errors.As(err, &ae):
		rt.Close()
		return nil, configUsageError("%s: %v", f.configFile, err)
	case err != nil:
		rt.Close()
		return nil, &exitError{code: exitSetup, msg: err.Error()}
	}
	if s.Stale {
		fmt.Fprintf(os.Stderr, "corral: sandbox %s keeps its state under an older configuration until it is idle\n", s.Key)
	}
	return &mcpSandbox{
		sb: s.Sandbox, policy: agentPolicy(a), readOnly: s.ReadOnlyWorkspace(),
		changeset: a.Sandbox.Changeset, zones: s.Zones, close: func() { rt.Close() },
		secrets: a.Sandbox.CorralConfig().Secrets,
		browser: func(ctx context.Context) (*browser.Browser, error) { return s.Browser(ctx) },
	}, nil
}

// sessionWorkspace is the agent's workspace when the file names none:
// --workspace, else the current directory.
func sessionWorkspace(f *runFlags) (string, error) {
	if f.workspace != "" {
		return f.workspace, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", &exitError{code: exitSetup, msg: err.Error()}
	}
	return wd, nil
}
