package config

import (
	"fmt"
	"slices"
	"time"

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
	ID string
	// MainSession is the key of the agent's main session, which mode
	// "non-main" leaves unsandboxed; "main" unless the file says otherwise.
	MainSession string
	Sandbox     Sandbox
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
	// Mode is corral.ModeDisabled when Sessions is SessionsOff, else
	// corral.ModeEnabled.
	Mode corral.Mode
	// Sessions says which sessions run sandboxed: SessionsAll unless the
	// file says "off" or "non-main" ("enabled" and "disabled" are kept as
	// aliases of "all" and "off").
	Sessions Sessions
	// Scope says which sessions share a persistent sandbox (ScopeSession
	// unless the file says otherwise).
	Scope Scope
	// WorkspaceAccess says what a persistent sandbox sees of the agent's
	// workspace (AccessRW, the agent's workspace itself, unless the file
	// says otherwise).
	WorkspaceAccess Access
	// Bootstrap are files copied into a sandbox's own workspace when it is
	// created (workspace_access "none" or "ro"), by base name.
	Bootstrap []string
	// StateDir holds the persistent sandboxes' state; empty means
	// $XDG_STATE_HOME/corral (~/.local/state/corral).
	StateDir string
	// PersistHome gives each persistent sandbox a writable home layered
	// over the host's (true unless the file says false).
	PersistHome bool
	// PruneIdle and PruneMaxAge: a persistent sandbox unused for longer
	// than PruneIdle, or created longer than PruneMaxAge ago, is removed
	// with its state (24h and 168h unless the file says otherwise).
	PruneIdle, PruneMaxAge time.Duration
	// MediaDir is the only directory inbound media may be copied from;
	// empty refuses all.
	MediaDir string
	// Binds show host paths at other paths inside the sandbox
	// (corral.Config.Binds), Source made absolute.
	Binds []corral.Bind
	// RealPathsFallback shows the workspace and Binds at their host paths
	// on a rung without a mount namespace instead of failing
	// (corral.Config.RealPathsFallback); false unless the file says true.
	RealPathsFallback bool `json:",omitempty"` // omitted when false: the hash of a sandbox that does not set it stays as it was
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
	// ProxyConnections caps the connections open through the proxy at
	// once (corral.Config.ProxyConnections): 0 for the default,
	// corral.NoLimit for none.
	ProxyConnections int
	// HostPorts, Publish and PublishAny are corral.Config's, with network
	// "none" or "allow" (host_ports, publish, publish_any).
	// Omitted when empty: the hash of a sandbox without them stays as it was.
	HostPorts  []int    `json:",omitempty"`
	Publish    []string `json:",omitempty"`
	PublishAny bool     `json:",omitempty"`
	// Fallback says what to do when the sandbox cannot be built.
	Fallback Fallback
	// Env holds "KEY" (copy the caller's value) and "KEY=VALUE" entries.
	Env []string
	// AllowPlanting names entries of corral.ProtectedNames left writable.
	AllowPlanting []string
	// Protect adds names to those guarded in writable roots
	// (corral.Config.Protect).
	Protect []string
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
	// Zones are the zones the agent declares (zones = [{ name, mode }]),
	// checked against the file's Zones; none means no file access.
	Zones []zones.Decl
	// Secrets are credentials the commands use without holding them
	// (corral.Config.Secrets), each value read when the file was.
	Secrets []Secret `json:",omitempty"`
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
		Mode:            corral.ModeEnabled,
		Sessions:        SessionsAll,
		Scope:           ScopeSession,
		WorkspaceAccess: AccessRW,
		PersistHome:     true,
		PruneIdle:       24 * time.Hour,
		PruneMaxAge:     7 * 24 * time.Hour,
		Network:         corral.NetworkHost,
		Fallback:        FallbackFail,
	}
}

// defaultMainSession is the main session's key when the file names none.
const defaultMainSession = "main"

// Sessions says which of an agent's sessions run sandboxed.
type Sessions string

const (
	SessionsOff     Sessions = "off"      // none: commands run with full host access
	SessionsNonMain Sessions = "non-main" // every session but the agent's main one
	SessionsAll     Sessions = "all"      // every session
)

// Scope says which sessions share one persistent sandbox.
type Scope string

const (
	ScopeSession Scope = "session" // one per session
	ScopeAgent   Scope = "agent"   // one per agent, shared by its sessions
	ScopeShared  Scope = "shared"  // one for every agent
)

// Access is what a persistent sandbox sees of the agent's workspace.
type Access string

const (
	// AccessNone gives the sandbox its own workspace at /workspace; the
	// agent's is invisible.
	AccessNone Access = "none"
	// AccessRO gives it its own workspace at /workspace and the agent's
	// read-only at /agent.
	AccessRO Access = "ro"
	// AccessRW makes the agent's workspace the sandbox's workspace.
	AccessRW Access = "rw"
)

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

		ProxyConnections: s.ProxyConnections,
		HostPorts:        slices.Clone(s.HostPorts),
		Publish:          slices.Clone(s.Publish),
		PublishAny:       s.PublishAny,

		AllowPlanting: slices.Clone(s.AllowPlanting),
		Protect:       slices.Clone(s.Protect),
		Reveal:        slices.Clone(s.Reveal),
		AllowHome:     s.AllowHome,

		AllowUnixSockets: s.AllowUnixSockets,
		AllowPtrace:      s.AllowPtrace,
		Changeset:        s.Changeset,
		ChangesetPaths:   slices.Clone(s.ChangesetPaths),
		PolicyFiles:      policyFiles(s.ConfigFile),
		Limits:           s.Limits,
		Binds:            slices.Clone(s.Binds),

		RealPathsFallback: s.RealPathsFallback,
		Secrets:           corralSecrets(s.Secrets),
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
