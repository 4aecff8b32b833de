package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/browser"
	"github.com/corralhq/corral/config"
	"github.com/corralhq/corral/zones"
)

// HotFor is how long after its last use a sandbox counts as in use: one
// whose configuration changed within it keeps its state (marked stale),
// one idle longer is recreated on its next use.
const HotFor = 5 * time.Minute

// Destinations of a persistent sandbox's own workspace and, with
// workspace_access "ro", of the agent's.
const (
	WorkspaceDir = config.OwnWorkspaceDir
	AgentDir     = config.AgentWorkspaceDir
)

// Options configure a Runtime. The zero value is usable.
type Options struct {
	// StateDir holds the registry and every persistent sandbox's state;
	// empty means the config's state_dir, else DefaultStateDir.
	StateDir string
	// Workspace returns an agent's workspace when its sandbox table names
	// none. Nil makes that an error.
	Workspace func(agentID string) string
	// Adjust, when set, is applied to every corral.Config before
	// corral.New (to set Logf, Ahead or a helper, say).
	Adjust func(*corral.Config)
	// Now is the clock; nil means time.Now. Tests pass a fake one.
	Now func() time.Time
}

// Runtime decides which of an agent's sessions run sandboxed and gives each
// the persistent sandbox its scope names. It is safe for concurrent use;
// several processes may share a state directory.
type Runtime struct {
	cfg   *config.Config
	state string
	reg   *Registry
	opts  Options
	now   func() time.Time

	mu   sync.Mutex
	live map[string]*live // by scope key: sandboxes built by this Runtime
}

// live is a sandbox this process built, with the hash it was built under,
// and its browser once Session.Browser has started one.
type live struct {
	sb      *corral.Sandbox
	hash    string
	browser *browser.Browser
}

// close ends the sandbox and its browser.
func (l *live) close() {
	if l.browser != nil {
		l.browser.Close()
	}
	l.sb.Close()
}

// New returns a Runtime for cfg. Nothing is created until a session asks.
func New(cfg *config.Config, opts Options) (*Runtime, error) {
	if cfg == nil {
		return nil, errors.New("agent: nil config")
	}
	state := opts.StateDir
	if state == "" {
		state = firstStateDir(cfg)
	}
	if state == "" {
		var err error
		if state, err = DefaultStateDir(); err != nil {
			return nil, err
		}
	}
	if !filepath.IsAbs(state) {
		return nil, fmt.Errorf("agent: state directory %s: not an absolute path", state)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Runtime{cfg: cfg, state: filepath.Clean(state), reg: OpenRegistry(RegistryPath(state)),
		opts: opts, now: now, live: map[string]*live{}}, nil
}

// RegistryPath is where the registry of the state directory dir lives.
func RegistryPath(dir string) string { return filepath.Join(dir, "sandboxes.json") }

// firstStateDir is the state_dir the file sets, if any agent's does.
func firstStateDir(cfg *config.Config) string {
	for _, a := range cfg.Agents {
		if a.Sandbox.StateDir != "" {
			return a.Sandbox.StateDir
		}
	}
	return ""
}

// StateDir returns the state directory.
func (rt *Runtime) StateDir() string { return rt.state }

// Registry returns the registry of the state directory.
func (rt *Runtime) Registry() *Registry { return rt.reg }

// Resolution is how one session of an agent runs.
type Resolution struct {
	Agent, Session string
	// Sandboxed is false when the agent's mode leaves the session
	// unsandboxed ("off", or "non-main" for the main session).
	Sandboxed bool
	Scope     config.Scope
	Access    config.Access
	// Key names the persistent sandbox: the session's "<agent>/<session>"
	// for scope "session", "agent:<agent>" for "agent", "shared" for
	// "shared"; empty when not sandboxed.
	Key string
}

// Resolve says how the session runs, without building anything.
func (rt *Runtime) Resolve(agentID, session string) (Resolution, error) {
	a, ok := rt.cfg.Agent(agentID)
	if !ok {
		return Resolution{}, fmt.Errorf("agent: no agent %q in the config", agentID)
	}
	if session == "" {
		return Resolution{}, errors.New("agent: empty session key")
	}
	s := a.Sandbox
	r := Resolution{Agent: agentID, Session: session, Scope: s.Scope, Access: s.WorkspaceAccess}
	switch s.Sessions {
	case config.SessionsOff:
		return r, nil
	case config.SessionsNonMain:
		if session == a.MainSession {
			return r, nil
		}
	}
	r.Sandboxed = true
	r.Key = ScopeKey(s.Scope, agentID, session)
	return r, nil
}

// ScopeKey is the key of the persistent sandbox a session of agentID uses
// under scope.
func ScopeKey(scope config.Scope, agentID, session string) string {
	switch scope {
	case config.ScopeAgent:
		return "agent:" + agentID
	case config.ScopeShared:
		return "shared"
	}
	return agentID + "/" + session
}

// Session is a session's sandbox, ready for commands.
type Session struct {
	Resolution
	// Sandbox runs the session's commands; with Sandboxed false it is a
	// corral.ModeDisabled one, with the host's full access.
	Sandbox *corral.Sandbox
	// Stale says the configuration changed while the sandbox was in use:
	// it keeps its state until idle, then is recreated.
	Stale bool
	// Zones is the agent's access to the zones it declares, which its
	// commands see at /NAME (config.Start.Zones); nil when it declares
	// none.
	Zones *zones.Access

	mediaDir string // the agent's media_dir: StageMedia's only source
	rt       *Runtime
	cfg      corral.Config // the sandbox's, which its browser's starts from
}

// ReadOnlyWorkspace reports whether the agent's workspace is read-only to
// the session (workspace_access "ro"): the tools that write, edit or patch
// files of it must not be offered.
func (s *Session) ReadOnlyWorkspace() bool { return s.Sandboxed && s.Access == config.AccessRO }

// Session returns the sandbox of an agent's session, building it (and its
// persistent state) when needed. It prunes the state directory first, at
// most every PruneEvery.
func (rt *Runtime) Session(agentID, session string) (*Session, error) {
	res, err := rt.Resolve(agentID, session)
	if err != nil {
		return nil, err
	}
	if _, err := rt.maybePrune(); err != nil {
		return nil, err
	}
	a, _ := rt.cfg.Agent(agentID)
	ws, err := rt.agentWorkspace(a)
	if err != nil {
		return nil, err
	}
	if !res.Sandboxed {
		cfg := corral.Config{Mode: corral.ModeDisabled, Workspace: ws}
		rt.adjust(&cfg)
		sb, err := corral.New(cfg)
		if err != nil {
			return nil, err
		}
		return &Session{Resolution: res, Sandbox: sb, mediaDir: a.Sandbox.MediaDir}, nil
	}
	s, err := rt.persistent(res, a, ws)
	if err != nil {
		return nil, err
	}
	s.mediaDir = a.Sandbox.MediaDir
	return s, nil
}

func (rt *Runtime) agentWorkspace(a config.Agent) (string, error) {
	if a.Sandbox.Workspace != "" {
		return a.Sandbox.Workspace, nil
	}
	if rt.opts.Workspace == nil {
		return "", fmt.Errorf("agent %s: no workspace in the config and no Options.Workspace", a.ID)
	}
	return rt.opts.Workspace(a.ID), nil
}

func (rt *Runtime) adjust(cfg *corral.Config) {
	if rt.opts.Adjust != nil {
		rt.opts.Adjust(cfg)
	}
}

// persistent resolves res to its persistent sandbox: registry entry, state
// directory, and a corral.Sandbox kept for the next call.
func (rt *Runtime) persistent(res Resolution, a config.Agent, ws string) (*Session, error) {
	slug := Slug(res.Key)
	dirs := rt.dirsOf(slug)
	st, err := rt.corralConfig(a, ws, dirs)
	if err != nil {
		return nil, err
	}
	cfg := st.Config
	hash := ConfigHash(a.Sandbox, ws)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	l := rt.live[res.Key]
	stale, recreate, err := rt.claim(res.Key, a.ID, hash)
	if err != nil {
		return nil, err
	}
	if l != nil && (l.hash == hash || stale) && !recreate {
		return &Session{Resolution: res, Sandbox: l.sb, Stale: stale, Zones: st.Zones, rt: rt, cfg: cfg}, nil
	}
	if l != nil {
		l.close()
		delete(rt.live, res.Key)
	}
	if err := rt.makeState(a, res, dirs); err != nil {
		return nil, err
	}
	sb, err := corral.New(cfg)
	if err != nil {
		return nil, err
	}
	rt.live[res.Key] = &live{sb: sb, hash: hash}
	return &Session{Resolution: res, Sandbox: sb, Stale: stale, Zones: st.Zones, rt: rt, cfg: cfg}, nil
}

// claim records a use of the sandbox key under the configuration hash:
// it adds the entry, or applies the hot/cold rule when the hash changed.
// recreate says the state was reset (by this call or a recreate before)
// and the sandbox must be built afresh.
func (rt *Runtime) claim(key, agentID, hash string) (stale, recreate bool, err error) {
	dirs := rt.dirsOf(Slug(key))
	err = rt.reg.Update(func(es []Entry) ([]Entry, bool, error) {
		now := rt.now()
		i := find(es, key)
		if i < 0 {
			es = append(es, Entry{Key: key, Slug: Slug(key), Agent: agentID, Created: now, LastUsed: now, ConfigHash: hash})
			return es, true, nil
		}
		e := &es[i]
		switch {
		case e.ConfigHash == hash:
			e.Stale = false
		case e.ConfigHash == "":
			e.ConfigHash, e.Stale = hash, false
			recreate = true // wiped by a recreate already; rebuild the sandbox
		case now.Sub(e.LastUsed) < HotFor:
			e.Stale = true
		default:
			if busy, err := dirs.wipe(false); err != nil || busy {
				e.Stale = true // in use by another process after all: keep it
				break
			}
			e.ConfigHash, e.Stale, recreate = hash, false, true
		}
		e.LastUsed, e.Agent = now, agentID
		stale = e.Stale
		return es, true, nil
	})
	return stale, recreate, err
}

// makeState creates the sandbox's state directory and, when it has its own
// workspace, seeds it.
func (rt *Runtime) makeState(a config.Agent, res Resolution, dirs stateDirs) error {
	if err := os.MkdirAll(dirs.root, 0o700); err != nil {
		return fmt.Errorf("agent: state of %s: %w", res.Key, err)
	}
	if res.Access == config.AccessRW {
		return nil
	}
	if err := makeWorkspace(dirs.workspace, a.Sandbox.Bootstrap); err != nil {
		return fmt.Errorf("agent: workspace of %s: %w", res.Key, err)
	}
	return nil
}

// corralConfig is the library configuration of a persistent sandbox: the
// agent's [agents.sandbox] resolved as every entry point resolves it
// (config.Config.SandboxConfig: its workspace as workspace_access says,
// its zones), a layered home and /tmp kept in its state directory, and
// every sandbox's state hidden.
func (rt *Runtime) corralConfig(a config.Agent, ws string, dirs stateDirs) (config.Start, error) {
	base := a.Sandbox.CorralConfig()
	base.Workspace = ws
	st, err := rt.cfg.SandboxConfig(a.ID, base, dirs.workspace)
	if err != nil {
		return st, err
	}
	cfg := &st.Config
	if a.Sandbox.PersistHome {
		cfg.PersistHome = dirs.home
	}
	cfg.PersistTmp = dirs.tmp
	cfg.HiddenPaths = append(cfg.HiddenPaths, rt.state)
	rt.adjust(cfg)
	return st, nil
}

// Close releases the sandboxes this Runtime built. Their state stays.
func (rt *Runtime) Close() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for k, l := range rt.live {
		l.close()
		delete(rt.live, k)
	}
	return nil
}

// liveKeys are the scope keys this Runtime holds sandboxes for.
func (rt *Runtime) liveKeys() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var out []string
	for k := range rt.live {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
