package corral

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/corralhq/corral/changeset"
	"github.com/corralhq/corral/internal/guard"
	"github.com/corralhq/corral/internal/pathtree"
)

// Mode says whether commands run contained.
type Mode string

const (
	// ModeEnabled runs every command inside the kernel-enforced sandbox.
	ModeEnabled Mode = "enabled"
	// ModeDisabled runs commands directly with the caller's full access.
	ModeDisabled Mode = "disabled"
)

// Network selects what the command can reach.
type Network string

const (
	// NetworkHost shares the caller's network.
	NetworkHost Network = "host"
	// NetworkNone gives the command a network namespace with only loopback up.
	NetworkNone Network = "none"
	// NetworkAllow gives the command only loopback and a proxy, served by
	// the caller, that reaches the names in Config.AllowedDomains and
	// nothing else (docs/layers.md, "Network allow").
	NetworkAllow Network = "allow"
)

// Config describes a sandbox. The zero value of every field is a sane default
// except Workspace, which is required when Mode is enabled (unless
// NoWorkspace).
type Config struct {
	// Mode defaults to ModeEnabled.
	Mode Mode
	// Workspace is always writable and is the default working directory.
	Workspace string
	// NoWorkspace builds a sandbox without a workspace: nothing of the
	// host is mounted writable but the WritablePaths and Binds given, and
	// commands start in their private /tmp, which with /dev/shm is all
	// they can write otherwise. Workspace, WorkspaceDest, Changeset and
	// ChangesetPaths must be empty. It needs a mount namespace (the full
	// rung): elsewhere New fails naming it, since without one the private
	// /tmp is a directory of the host.
	NoWorkspace bool
	// WritablePaths are further directories or files the command may write.
	WritablePaths []string
	// ReadOnlyPaths stay read-only even under a writable parent, such as an
	// agent's data directory inside its instance directory.
	ReadOnlyPaths []string
	// HiddenPaths cannot be read or listed at all. Each must exist. The
	// well-known credential stores of [CredentialStores] are hidden too,
	// without being listed here, unless Reveal names them.
	HiddenPaths []string
	// Reveal opts credential stores back in: every path of
	// [CredentialStores] equal to or inside an entry stays visible. An
	// entry that covers none of them is an error.
	Reveal []string
	// PolicyFiles are files that configure this sandbox, such as the
	// config file it was read from: they are kept read-only inside it, so
	// that a command cannot rewrite, replace or remove the policy the next
	// command runs under. Each must exist; one reached through a symlink
	// inside a writable path is refused, as the command could swap the
	// link. Files that are not regular (a pipe such as /dev/stdin) are
	// skipped.
	PolicyFiles []string
	// AllowHome lets the workspace or a writable path be the caller's home
	// directory or a directory holding it. By default that is refused:
	// the command could plant code that runs at the next login (see
	// docs/layers.md for what stays protected when it is allowed). The
	// root directory is refused whatever this says.
	AllowHome bool
	// WorkspaceDest, when set, is where the workspace appears inside the
	// sandbox (such as "/workspace"), and the working directory commands
	// start in; relative Cmd.Dir values are taken from there. See [Bind]
	// for what a destination may be and where it works. Not with Changeset.
	WorkspaceDest string
	// Binds show further host paths at other paths inside the sandbox.
	Binds []Bind
	// RealPathsFallback lets a sandbox with destinations (WorkspaceDest,
	// Binds) run on a rung without a mount namespace by showing each
	// source at its own host path instead; Sandbox.WorkspaceDir, Binds,
	// SandboxPath and HostPath follow, and Logf names each move. Off by
	// default: a command told to look in /agent finds nothing there. See
	// docs/layers.md, "Rungs".
	RealPathsFallback bool
	// PersistHome, when set, gives commands a writable home that lasts
	// from one command to the next: the caller's home as overlayfs, its
	// changes kept in this directory (created when missing), the host's
	// home never written. Commands sharing the directory run one at a
	// time. The directory is hidden from commands and must lie outside
	// every writable path. Linux full rung only; docs/layers.md ("What a
	// command gets") says what it holds.
	PersistHome string
	// PersistTmp, when set, is bound at /tmp in place of a private tmpfs,
	// so that what a command leaves in /tmp is there for the next one. The
	// directory is created when missing, made private (0700) and hidden
	// from commands at its own path. Linux full rung only.
	PersistTmp string
	// Network defaults to NetworkHost.
	Network Network
	// AllowedDomains, with NetworkAllow, are the names the command may
	// reach through the proxy: "example.com", "*.example.com" (its
	// subdomains), each with an optional ":port" (any port without).
	// Names are matched case-insensitively after IDNA normalisation. No
	// entry allows nothing. Needs NetworkAllow.
	AllowedDomains []string
	// DeniedDomains are names refused even when AllowedDomains allows
	// them, in the same form. Needs NetworkAllow.
	DeniedDomains []string
	// AllowedIPs are address ranges ("10.1.0.0/16", or one address) that
	// allowed names may resolve to and IP literals may name. Without them
	// the proxy refuses private, loopback, link-local, CGNAT and cloud
	// metadata addresses even for an allowed name. Needs NetworkAllow.
	AllowedIPs []string
	// ProxyConnections, with NetworkAllow, caps the connections open
	// through the proxy at once, idle ones included: each command's own
	// on the full rung, all of a Sandbox's commands together on the
	// landlock and seatbelt rungs, where they share one proxy. Each costs
	// the caller a descriptor or two. One over the cap is refused like a
	// name not allowed (a ViolationNetwork, "over the limit of N
	// connections open through the proxy at once"). 0 takes
	// DefaultProxyConnections; NoLimit sets none. Needs NetworkAllow.
	ProxyConnections int
	// HostPorts, with NetworkNone or NetworkAllow, are TCP ports of the
	// host's loopback the command reaches: inside, 127.0.0.1:PORT,
	// [::1]:PORT and localhost:PORT reach the host's service on PORT, and
	// no other host port is reachable. See ParseHostPort.
	HostPorts []int
	// Publish, with NetworkNone or NetworkAllow, are the command's
	// servers to reach from the host, "[HOSTADDR:]HOSTPORT[:PORT]": while
	// the command runs, HOSTADDR:HOSTPORT (127.0.0.1 unless given; PORT is
	// HOSTPORT unless given) on the host reaches the command's server on
	// PORT of the sandbox's loopback. An address other than loopback needs
	// PublishAny. Linux full rung only. See ParsePublish.
	Publish []string
	// PublishAny lets Publish listen on a host address other than
	// loopback, where other machines may reach the command's server.
	PublishAny bool
	// Secrets are credentials commands use without holding them: each
	// command's variable holds a placeholder and the proxy adds the value
	// to requests to the secret's domains (see [Secret]). Needs
	// NetworkAllow.
	Secrets []Secret
	// Env adds variables to the default environment: "KEY=VALUE" sets a value,
	// a bare "KEY" copies the caller's value (explicitly, even for names that
	// look like secrets). The default environment also carries the proxy
	// variables, without any user:password in their URLs, and the CA-bundle
	// variables. A name listed here also passes whole through Cmd.Env, which
	// otherwise loses secret-looking names and proxy credentials.
	Env []string
	// AllowPlanting lists entries of [ProtectedNames] that stay writable
	// as they are inside writable roots (for example ".git" for an agent
	// that manages hooks on purpose: its git directory is then neither
	// staged nor checked).
	AllowPlanting []string
	// Protect adds names to [ProtectedNames], guarded the same way in
	// every writable root: what host configuration runs from the project
	// that the list cannot know (a core.hooksPath of "tools/hooks", the
	// module a filter driver imports, a known "*.code-workspace" file). A
	// plain name is protected at every depth, one with a slash at the top
	// of each root. Each is relative, clean and without "..".
	Protect []string
	// Changeset, when set, keeps the command's writes to the workspace out
	// of the workspace: it is mounted as overlayfs with its changes in this
	// directory, created when missing, for review and apply with package
	// changeset. A later Sandbox given the same directory continues the
	// same changeset; after Discard, commands fail until a new Sandbox
	// creates it again. Linux only; writable paths not in ChangesetPaths
	// are still written directly. See [changeset] for the layout and
	// limits.
	Changeset string
	// ChangesetPaths are further writable directories whose writes go to
	// the changeset too, each mounted as overlayfs like the workspace. Each
	// must be one of WritablePaths (compared once both are canonical) and a
	// directory, and none may lie inside the workspace or another of them,
	// or contain one. Needs Changeset. A changeset keeps the directories it
	// began with: a later Sandbox on it must name the same ones.
	ChangesetPaths []string
	// Fallback says what happens on a host that cannot give every layer of
	// the full rung: FallbackFail (the default) refuses to run, naming the
	// missing layer; FallbackWarn runs on the best rung the host allows and
	// says so once through Logf, unsandboxed if nothing is left. See
	// docs/layers.md for what each rung guarantees.
	Fallback Fallback
	// AllowUnixSockets lets commands create unix domain sockets. By default
	// only socketpair works: a socket file visible in the sandbox, such as
	// docker.sock, would otherwise be reachable even through a read-only
	// mount. Where Landlock can restrict it (ABI 9), connecting still works
	// only to sockets under writable paths.
	AllowUnixSockets bool
	// AllowPtrace lets commands trace their own processes (debuggers,
	// strace). Processes outside the sandbox stay out of reach.
	AllowPtrace bool
	// DirectSpawn clones each sandbox from the calling process instead of a
	// small helper process. It saves starting the helper, which suits short
	// programs with small heaps such as the corral CLI; a long-lived caller
	// with a large heap pays a full copy of its page tables per spawn.
	DirectSpawn bool
	// Ahead is how many sandboxes New keeps built ahead of time, waiting for
	// commands, so that a command does not wait for one to be built. Each is
	// an idle process of a few MiB. Zero means the default, 2; a negative
	// value keeps none. With DirectSpawn only the first is built ahead, from
	// New on, so that it starts up while the caller prepares the command.
	Ahead int
	// Limits bound what each command may use: memory, tasks, CPU, the
	// size of /tmp and of files, open files. Zero fields take the defaults
	// of [DefaultLimits]; [NoLimit] asks for none.
	Limits Limits
	// IdleTimeout reaps the sandboxes built ahead (see Ahead) once no
	// command has taken one for that long, so that a Sandbox left unused
	// holds no idle processes; the next command pays one ordinary spawn and
	// the sandboxes ahead are built again behind it. Zero means the
	// default, 30 seconds; a negative value never reaps them. (The one
	// sandbox DirectSpawn builds ahead is kept until taken or Close.)
	IdleTimeout time.Duration
	// Helper is the absolute path of a binary to run the sandboxes' init
	// from instead of the caller's own: corral-init (built from
	// cmd/corral-init), a corral CLI binary of the same version, or another
	// program whose main calls Init first. A caller with a heavy package
	// initialisation pays it for every sandbox; a helper does not
	// (docs/library.md has numbers). Empty means the environment variable
	// CORRAL_HELPER, and without it the caller's own binary. New opens the
	// file once and runs that open file; it may not lie inside the
	// workspace or a writable path. A helper from another version of
	// corral is a SetupError of LayerInit. Linux only (ignored on macOS).
	Helper string
	// Logf receives the few diagnostics the library prints (for example the
	// one-time notice that Mode is disabled). Nil discards them.
	Logf func(format string, args ...any)
	// Report has the sandbox tell what it refused each command: writes
	// outside the writable paths, under read-only, hidden or protected ones,
	// and what other layers report (see [Violation]). [Cmd.Report] returns
	// the list after Wait. The kernel still decides every call; the report
	// only says what it refused, and costs each write-intent call a round
	// trip to the sandbox's init (see the package documentation).
	Report bool
	// ReportReads has the report also list reads of hidden paths (an
	// open without write flags, or an exec, of a path at or under one,
	// "hidden by --hide ~/.ssh"), and implies Report. Off by default, as
	// every open of the command then waits for a round trip to the
	// sandbox's init: about twice the CPU time of a command that opens
	// thousands of files (docs/benchmarks.md). Without a hidden path it
	// costs nothing more.
	ReportReads bool
	// OnViolation, when set, receives each refusal the first time it is
	// seen, while the command runs where the backend allows (from the
	// goroutine in Wait), else when it exits. It implies Report. It must
	// not block for long.
	OnViolation func(Violation)

	// learn is set by a learning run (see LearnCommand).
	learn *learnHooks
}

// ProtectedNames returns the names, relative to each writable root, of the
// directories and files from which programs on the host run code later:
// git's directory, editors' and agents' configuration (".vscode",
// ".claude", ".mcp.json"...), direnv's ".envrc", and shell and session
// start-up files. The first group is protected at every depth of a writable
// root, the start-up files at its top. docs/layers.md ("Protected names")
// says what each rung guarantees for them; see [Config.AllowPlanting] to
// leave one writable.
func ProtectedNames() []string { return guard.Names() }

// spec is a Config after validation: every path absolute, cleaned, with
// symlinks resolved.
type spec struct {
	Mode      Mode
	Workspace string // empty with NoWorkspace
	// NoWorkspace: the sandbox has no workspace (Config.NoWorkspace).
	NoWorkspace bool
	Writable    []string
	ReadOnly    []string
	Hidden      []string
	Network     Network
	// Egress is the proxy's policy with NetworkAllow, else nil.
	Egress *egressPolicy
	// HostPorts and Publish are Config's, parsed (hostports.go).
	HostPorts     []uint16
	Publish       []published
	Env           []string
	AllowPlanting []string
	Protect       []string // Config.Protect's names that ProtectedNames lacks
	DirectSpawn   bool
	Ahead         int           // resolved: 0 keeps none
	IdleTimeout   time.Duration // resolved: 0 never reaps
	Helper        string        // canonical, or empty for the caller's own binary
	// Changeset is the open changeset the workspace is overlaid with, or nil.
	Changeset *changeset.Changeset
	// Overlaid are the canonical ChangesetPaths: writable paths besides
	// the workspace that the changeset overlays too.
	Overlaid    []string
	Fallback    Fallback
	UnixSockets bool
	Ptrace      bool
	Limits      limitSpec
	logf        func(format string, args ...any)
	// refused receives the refusals of a proxy the sandbox's commands
	// share (Sandbox.recordViolation).
	refused     func(Violation)
	Report      bool
	ReportReads bool
	onViolation func(Violation)

	// WorkspaceDest and Binds are the mount destinations; Binds' sources
	// canonical. RealPaths shows them at their host paths on a rung
	// without a mount namespace.
	WorkspaceDest string
	Binds         []Bind
	RealPaths     bool
	// PersistHome and PersistTmp are canonical; Home is the caller's home
	// that PersistHome layers.
	PersistHome, PersistTmp, Home string

	// DefaultHidden are the credential stores hidden by default, also
	// listed in Hidden; Policy the canonical PolicyFiles, also in ReadOnly.
	DefaultHidden []string
	Policy        []string

	// Secrets are Config.Secrets with their values and placeholders, or nil.
	Secrets *secretPolicy
}

// defaultAhead is how many sandboxes are kept built ahead by default.
const defaultAhead = 2

// defaultIdleTimeout is how long sandboxes built ahead wait unused before
// they are reaped, by default.
const defaultIdleTimeout = 30 * time.Second

func idleTimeoutOf(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return defaultIdleTimeout
	case d < 0:
		return 0
	}
	return d
}

func aheadOf(n int) int {
	switch {
	case n == 0:
		return defaultAhead
	case n < 0:
		return 0
	}
	return n
}

// resolve validates c and canonicalizes its paths. It touches the filesystem
// (to resolve symlinks) but nothing else.
func (c Config) resolve() (*spec, error) {
	s := &spec{DirectSpawn: c.DirectSpawn, Ahead: aheadOf(c.Ahead), IdleTimeout: idleTimeoutOf(c.IdleTimeout), UnixSockets: c.AllowUnixSockets, Ptrace: c.AllowPtrace,
		Report: c.Report || c.ReportReads || c.OnViolation != nil, ReportReads: c.ReportReads, onViolation: c.OnViolation}
	if err := s.resolveChoices(c); err != nil {
		return nil, err
	}
	if s.Mode == ModeDisabled && (len(c.Binds) > 0 || c.WorkspaceDest != "") {
		return nil, &ConfigError{Field: "Binds", Reason: "mount destinations need the sandbox, which Mode disables"}
	}
	if s.Mode == ModeDisabled && (c.PersistHome != "" || c.PersistTmp != "") {
		return nil, &ConfigError{Field: "PersistHome", Reason: "a persistent home or /tmp needs the sandbox, which Mode disables"}
	}
	if err := s.resolvePaths(c); err != nil {
		return nil, err
	}
	if err := s.resolveEgress(c); err != nil {
		return nil, err
	}
	if err := s.resolveHostNet(c); err != nil {
		return nil, err
	}
	if err := s.resolveSecrets(c); err != nil {
		return nil, err
	}
	var err error
	if s.Limits, err = c.Limits.resolve(); err != nil {
		return nil, err
	}
	if err := s.resolveHelper(c); err != nil {
		return nil, err
	}
	if err := checkEnv(c.Env); err != nil {
		return nil, err
	}
	s.Env = slices.Clone(c.Env)
	for _, name := range c.AllowPlanting {
		if !slices.Contains(ProtectedNames(), name) {
			return nil, &ConfigError{Field: "AllowPlanting", Value: name, Reason: "not one of corral.ProtectedNames()"}
		}
	}
	s.AllowPlanting = slices.Clone(c.AllowPlanting)
	if s.Protect, err = protectNames(c.Protect, c.AllowPlanting); err != nil {
		return nil, err
	}
	return s, nil
}

// resolveChoices validates the enumerated fields and fills in defaults.
func (s *spec) resolveChoices(c Config) error {
	s.Mode, s.Network, s.Fallback = c.Mode, c.Network, c.Fallback
	if s.Mode == "" {
		s.Mode = ModeEnabled
	}
	if s.Network == "" {
		s.Network = NetworkHost
	}
	if s.Fallback == "" {
		s.Fallback = FallbackFail
	}
	switch s.Mode {
	case ModeEnabled, ModeDisabled:
	default:
		return &ConfigError{Field: "Mode", Value: string(c.Mode), Reason: `want "enabled" or "disabled"`}
	}
	switch s.Network {
	case NetworkHost, NetworkNone, NetworkAllow:
	default:
		return &ConfigError{Field: "Network", Value: string(c.Network), Reason: `want "host", "none" or "allow"`}
	}
	switch s.Fallback {
	case FallbackFail, FallbackWarn:
	default:
		return &ConfigError{Field: "Fallback", Value: string(c.Fallback), Reason: `want "fail" or "warn"`}
	}
	return nil
}

func (s *spec) resolvePaths(c Config) error {
	if c.NoWorkspace {
		if err := checkNoWorkspace(c); err != nil {
			return err
		}
		s.NoWorkspace = true
	} else if err := s.resolveWorkspace(c); err != nil || s.Workspace == "" {
		return err // ModeDisabled needs no workspace
	}
	var err error
	if s.Writable, err = canonicalAll("WritablePaths", c.WritablePaths); err != nil {
		return err
	}
	if s.ReadOnly, err = canonicalAll("ReadOnlyPaths", c.ReadOnlyPaths); err != nil {
		return err
	}
	if s.Hidden, err = canonicalAll("HiddenPaths", c.HiddenPaths); err != nil {
		return err
	}
	if err := s.resolveOverlaid(c); err != nil {
		return err
	}
	if err := s.resolveBinds(c); err != nil {
		return err
	}
	if err := s.checkHidden(); err != nil {
		return err
	}
	if err := s.resolvePersist(c); err != nil {
		return err
	}
	if err := s.resolvePolicy(c); err != nil {
		return err
	}
	if !s.hasDests() {
		return nil
	}
	return s.checkDestOverlap()
}

// resolveWorkspace canonicalizes the workspace, which only ModeDisabled
// may leave empty.
func (s *spec) resolveWorkspace(c Config) error {
	if c.Workspace == "" {
		if s.Mode == ModeDisabled {
			return nil
		}
		return &ConfigError{Field: "Workspace", Reason: "required (or NoWorkspace)"}
	}
	ws, err := canonical("Workspace", c.Workspace)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(ws); err == nil && !fi.IsDir() {
		return &ConfigError{Field: "Workspace", Value: c.Workspace, Reason: "not a directory"}
	}
	s.Workspace = ws
	return nil
}

// checkNoWorkspace refuses what NoWorkspace leaves nothing to apply to.
func checkNoWorkspace(c Config) error {
	refuse := func(field, value, reason string) error {
		return &ConfigError{Field: field, Value: value, Reason: reason + " with NoWorkspace"}
	}
	switch {
	case c.Mode == ModeDisabled:
		return refuse("NoWorkspace", "", "Mode disables the sandbox, whose absence of a workspace means nothing")
	case c.Workspace != "":
		return refuse("Workspace", c.Workspace, "must be empty")
	case c.WorkspaceDest != "":
		return refuse("WorkspaceDest", c.WorkspaceDest, "must be empty")
	case c.Changeset != "" || len(c.ChangesetPaths) > 0:
		return refuse("Changeset", c.Changeset, "a changeset overlays the workspace first: none")
	}
	return nil
}

// checkHidden refuses any other path inside a hidden one: the hidden path is
// covered by an empty mount, so nothing beneath it could be shown.
func (s *spec) checkHidden() error {
	for _, h := range s.Hidden {
		if h == "/" {
			return &ConfigError{Field: "HiddenPaths", Value: h, Reason: "cannot hide the root"}
		}
		// A workspace shown at a destination is not mounted at its own
		// path: it may lie in a hidden directory (a persistent sandbox's
		// state).
		others := append([]string{s.Workspace}, s.Writable...)
		if s.WorkspaceDest != "" {
			others = others[1:]
		}
		others = append(others, s.ReadOnly...)
		for _, p := range others {
			if pathtree.Within(p, h) {
				return &ConfigError{Field: "HiddenPaths", Value: h, Reason: fmt.Sprintf("contains %s, which is also configured", p)}
			}
		}
	}
	return nil
}

func canonicalAll(field string, paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		c, err := canonical(field, p)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// canonical makes p absolute and resolves every symlink in it, so the mount
// plan binds the real directory and a link cannot redirect it later.
func canonical(field, p string) (string, error) {
	if p == "" {
		return "", &ConfigError{Field: field, Reason: "empty path"}
	}
	if strings.ContainsRune(p, 0) {
		return "", &ConfigError{Field: field, Value: p, Reason: "contains a NUL byte"}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", &ConfigError{Field: field, Value: p, Reason: err.Error()}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", &ConfigError{Field: field, Value: p, Reason: "does not exist or cannot be resolved", Err: err}
	}
	return real, nil
}

func checkEnv(env []string) error {
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" || strings.ContainsAny(name, "\x00") {
			return &ConfigError{Field: "Env", Value: kv, Reason: "want KEY or KEY=VALUE"}
		}
	}
	return nil
}
