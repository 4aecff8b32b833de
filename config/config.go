package config

import (
	"fmt"
	"slices"

	"github.com/corralhq/corral"
)

// Config is a parsed and validated config file. Treat it as read-only: a
// [Runtime] hands the same value to every goroutine.
type Config struct {
	// File is the absolute path the config was read from.
	File string
	// Agents are in file order, with unique ids.
	Agents []Agent
}

// Agent is one [[agents]] entry.
type Agent struct {
	ID      string
	Sandbox Sandbox
	// Tools is the agent's tool policy: each list from [agents.tools]
	// when it sets it, else from [defaults.tools], else nil (no list).
	Tools Tools
}

// Tools is a tool policy as the file gives it: tool names in which `*`
// matches any run of characters. Deny wins over Allow; an empty Allow
// means every tool. tools.Policy{Allow: t.Allow, Deny: t.Deny} is what
// decides.
type Tools struct {
	Allow []string
	Deny  []string
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
	// Network is corral.NetworkHost unless the file says "none" or "allow".
	Network corral.Network
	// AllowedDomains, DeniedDomains and AllowedIPs are network = "allow"'s
	// lists (corral.Config's fields of the same names).
	AllowedDomains []string
	DeniedDomains  []string
	AllowedIPs     []string
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
	// Limits are the [agents.sandbox.limits] table's (corral.Config.Limits):
	// zero for a key left out, which keeps its default.
	Limits corral.Limits
	// ConfigFile is the file the table was read by Load or Watch from, as
	// given (made absolute); empty for Parse. CorralConfig lists it in
	// corral.Config.PolicyFiles, so that no command can rewrite the policy
	// it and the next ones run under.
	ConfigFile string
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

		AllowedDomains: slices.Clone(s.AllowedDomains),
		DeniedDomains:  slices.Clone(s.DeniedDomains),
		AllowedIPs:     slices.Clone(s.AllowedIPs),

		AllowPlanting: slices.Clone(s.AllowPlanting),
		Reveal:        slices.Clone(s.Reveal),
		AllowHome:     s.AllowHome,

		AllowUnixSockets: s.AllowUnixSockets,
		AllowPtrace:      s.AllowPtrace,
		Changeset:        s.Changeset,
		ChangesetPaths:   slices.Clone(s.ChangesetPaths),
		PolicyFiles:      policyFiles(s.ConfigFile),
		Limits:           s.Limits,
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

// ApplyNetwork gives sb, a running sandbox made from an earlier version of
// s, the network lists of s: connections its commands make from then on,
// running ones too, follow them. A sandbox whose Network is not
// corral.NetworkAllow refuses; so does one made with a different Network,
// which a running sandbox cannot change to.
func (s Sandbox) ApplyNetwork(sb *corral.Sandbox) error {
	if s.Network != corral.NetworkAllow {
		return fmt.Errorf("config: network %q cannot be applied to a running sandbox: start a new one", s.Network)
	}
	return sb.SetNetworkRules(s.AllowedDomains, s.DeniedDomains, s.AllowedIPs)
}
