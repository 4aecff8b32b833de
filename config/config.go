package config

import (
	"slices"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/zones"
)

// Config is a parsed and validated config file. Treat it as read-only: a
// [Runtime] hands the same value to every goroutine.
type Config struct {
	// File is the absolute path the config was read from.
	File string
	// Agents are in file order, with unique ids.
	Agents []Agent
	// Zones are the [zones.NAME] tables, sorted by name, or the default
	// zones (zones.Defaults of the file's directory) when it has none.
	Zones []zones.Zone
}

// Agent is one [[agents]] entry.
type Agent struct {
	ID      string
	Sandbox Sandbox
}

// Sandbox is an agent's [agents.sandbox] table with every default filled in
// and every path absolute.
type Sandbox struct {
	// Mode is corral.ModeEnabled unless the file says "disabled".
	Mode corral.Mode
	// Workspace is empty when the file leaves it to the program, which
	// usually derives it from the agent's id.
	Workspace     string
	WritablePaths []string
	ReadOnlyPaths []string
	HiddenPaths   []string
	// Reveal names credential stores left visible (corral.Config.Reveal).
	Reveal []string
	// AllowHome lets the workspace or a writable path be a home directory
	// (corral.Config.AllowHome); false unless the file says true.
	AllowHome bool
	// Network is corral.NetworkHost unless the file says "none".
	Network corral.Network
	// Fallback says what to do when the sandbox cannot be built.
	Fallback Fallback
	// Env holds "KEY" (copy the caller's value) and "KEY=VALUE" entries.
	Env []string
	// AllowPlanting names entries of corral.ProtectedNames left writable.
	AllowPlanting []string
	// AllowUnixSockets and AllowPtrace are corral.Config's, false unless
	// the file says true.
	AllowUnixSockets bool
	AllowPtrace      bool
	// Changeset, when set, keeps the commands' workspace writes in this
	// directory for review instead of the workspace (corral.Config.Changeset).
	Changeset string
	// ChangesetPaths are writable paths whose writes the changeset keeps
	// too (corral.Config.ChangesetPaths): each must also be listed in
	// WritablePaths, which corral.New checks.
	ChangesetPaths []string
	// ConfigFile is the file the table was read by Load or Watch from, as
	// given (made absolute); empty for Parse. CorralConfig lists it in
	// corral.Config.PolicyFiles, so that no command can rewrite the policy
	// it and the next ones run under.
	ConfigFile string
	// Zones are the zones the agent declares (zones = [{ name, mode }]),
	// checked against the file's Zones; none means no file access.
	Zones []zones.Decl
}

// Fallback says what happens when the host cannot give the sandbox that
// Mode asks for.
type Fallback string

const (
	// FallbackFail refuses to run the command (the default).
	FallbackFail Fallback = "fail"
	// FallbackWarn runs it with what the host offers, down to no sandbox at
	// all, and logs a warning.
	FallbackWarn Fallback = "warn"
)

// defaultSandbox is the one place defaults live: a [agents.sandbox] table
// that is absent, or leaves a key out, gets the value set here. Absent lists
// stay empty and an absent workspace stays "" for the program to choose.
func defaultSandbox() Sandbox {
	return Sandbox{
		Mode:     corral.ModeEnabled,
		Network:  corral.NetworkHost,
		Fallback: FallbackFail,
	}
}

// Agent returns the agent with the given id.
func (c *Config) Agent(id string) (Agent, bool) {
	for _, a := range c.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return Agent{}, false
}

// IDs returns the agents' ids in file order.
func (c *Config) IDs() []string {
	ids := make([]string, len(c.Agents))
	for i, a := range c.Agents {
		ids[i] = a.ID
	}
	return ids
}

// CorralConfig returns the library configuration for s. The lists are
// copies, so the caller may extend them. A program still sets what a file
// cannot hold, such as Logf, and the Workspace when s leaves it empty.
func (s Sandbox) CorralConfig() corral.Config {
	return corral.Config{
		Mode:          s.Mode,
		Fallback:      corral.Fallback(s.Fallback),
		Workspace:     s.Workspace,
		WritablePaths: slices.Clone(s.WritablePaths),
		ReadOnlyPaths: slices.Clone(s.ReadOnlyPaths),
		HiddenPaths:   slices.Clone(s.HiddenPaths),
		Network:       s.Network,
		Env:           slices.Clone(s.Env),
		AllowPlanting: slices.Clone(s.AllowPlanting),
		Reveal:        slices.Clone(s.Reveal),
		AllowHome:     s.AllowHome,

		AllowUnixSockets: s.AllowUnixSockets,
		AllowPtrace:      s.AllowPtrace,
		Changeset:        s.Changeset,
		ChangesetPaths:   slices.Clone(s.ChangesetPaths),
		PolicyFiles:      policyFiles(s.ConfigFile),
	}
}

func policyFiles(file string) []string {
	if file == "" {
		return nil
	}
	return []string{file}
}

// fromFile records in every agent's sandbox the file cfg was read from.
func fromFile(cfg *Config, file string) *Config {
	for i := range cfg.Agents {
		cfg.Agents[i].Sandbox.ConfigFile = file
	}
	return cfg
}
