package corral

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/corralhq/corral/egress"
	"github.com/corralhq/corral/internal/learn"
	"github.com/corralhq/corral/internal/pathtree"
)

// Learned is the policy a learning run found a command needs (see Learn):
// what it wrote outside the writable paths, the destinations it reached or
// asked for, the unix sockets, hidden paths and limits it needed.
type Learned struct {
	// Config is the config learned from with every entry in force added:
	// running the command again with it meets no refusal that a setting
	// can lift (see Notes), as far as the command does the same again.
	Config Config
	// Entries are what was added, each with why; those with Weakens set
	// would lift a protection and are not in Config.
	Entries []LearnedEntry
	// Notes are refusals no setting lifts, in words.
	Notes []string
	// Report is what the learning run itself was refused.
	Report []Violation
	// Err is the command's own outcome, as Cmd.Run returned it (Learn
	// only).
	Err error

	policy *learn.Policy
}

// LearnedEntry is one key, or one element of a list key, of a learned
// agent config.
type LearnedEntry struct {
	// Key is the key in an agent's sandbox table ("writable_paths"), or
	// "limits.NAME" in its limits table; Value its TOML value (a list
	// key's element).
	Key, Value string
	// Why is the first path, destination or call that needed it, and the
	// count.
	Why string
	// Weakens, when set, is the protection the entry would lift: it is
	// left out of Learned.Config and written commented out.
	Weakens string
	// Warning is what an entry in force costs (an address range opened).
	Warning string
}

// TOML is the learned policy as a config file holding one agent, id,
// with comment lines first: each entry with its reason, those that would
// lift a protection commented out.
func (l *Learned) TOML(id string, comment ...string) []byte {
	return learn.Render(id, l.policy, comment)
}

// MergeInto adds the learned policy to agent id of the config file doc
// (the only agent when id is empty; a new one when doc has none of that
// id), keeping the rest of doc as it is and marking each line it adds.
// The caller parses the result before using it.
func (l *Learned) MergeInto(doc []byte, id string) ([]byte, error) {
	return learn.Merge(doc, id, l.policy)
}

// learnHooks is what a learning run sets in the Config it builds.
type learnHooks struct {
	// connected receives each connection the proxy made, when the run
	// reaches destinations (the caller asked for NetworkAllow).
	connected func(egress.Connected)
}

// Learning is a command running in learning mode (see LearnCommand). Set
// its standard streams, Run it (or Start and Wait), then call Learned.
type Learning struct {
	*Cmd
	sb    *Sandbox
	base  Config
	dir   string
	conns connLog
}

// Learn runs name with args once so that nothing it does reaches the host
// and the policy being learned does not stop it, and returns the policy
// that lets it run: see LearnCommand. The command gets no standard input
// and its output is discarded; a caller that wants them uses LearnCommand.
func Learn(ctx context.Context, cfg Config, name string, args ...string) (*Learned, error) {
	l, err := LearnCommand(ctx, cfg, name, args...)
	if err != nil {
		return nil, err
	}
	err = l.Run()
	learned, lerr := l.Learned()
	if lerr != nil {
		return nil, lerr
	}
	var se *SetupError
	if errors.As(err, &se) {
		return nil, err
	}
	learned.Err = err
	return learned, nil
}

// LearnCommand prepares name with args to run in learning mode under cfg.
// The workspace and the directories of WritablePaths are overlaid with a
// throwaway changeset, and the caller's home with a throwaway layer, so
// that nothing the command writes there lands; what it writes in the home
// is what it needs writable. Every refusal is recorded, reads of hidden
// paths too. With NetworkAllow every destination is reached through the
// proxy and recorded, names that resolve into a refused range and the
// address included; with any other Network each is refused and recorded,
// reaching nothing. Learning needs the full rung (a mount namespace).
//
// Not lifted during the run, so recorded as refused and the command may
// fail on them: writes outside the home and the writable paths, unix
// sockets, hidden paths, protected names, system calls and limits.
func LearnCommand(ctx context.Context, cfg Config, name string, args ...string) (*Learning, error) {
	if cfg.WorkspaceDest != "" {
		return nil, &ConfigError{Field: "WorkspaceDest", Value: cfg.WorkspaceDest, Reason: "a learning run overlays the workspace with a changeset, which a destination does not take"}
	}
	dir, err := os.MkdirTemp("", "corral-learn-")
	if err != nil {
		return nil, &SetupError{Layer: LayerOverlay, Err: err}
	}
	l := &Learning{base: cfg, dir: dir}
	lc, err := l.config(cfg)
	if err == nil {
		l.sb, err = New(lc)
	}
	if err != nil {
		removeAll(dir)
		return nil, err
	}
	l.Cmd = l.sb.Command(ctx, name, args...)
	return l, nil
}

// config is the Config the learning run uses.
func (l *Learning) config(cfg Config) (Config, error) {
	lc := cfg
	lc.PersistHome = filepath.Join(l.dir, "home")
	lc.PersistTmp = ""
	lc.Report, lc.ReportReads = true, true
	lc.Ahead = -1
	lc.Changeset, lc.ChangesetPaths, lc.WritablePaths = "", nil, nil
	if !cfg.NoWorkspace {
		lc.Changeset = filepath.Join(l.dir, "changeset")
		lc.ChangesetPaths = overlayable(cfg)
		lc.WritablePaths = lc.ChangesetPaths
	}
	lc.Network = NetworkAllow
	if cfg.Network == NetworkAllow {
		lc.learn = &learnHooks{connected: l.conns.add}
	} else {
		lc.AllowedDomains, lc.DeniedDomains, lc.AllowedIPs = nil, nil, nil
	}
	return lc, nil
}

// overlayable are cfg's writable directories a changeset can overlay:
// each outside the workspace and apart from the others.
func overlayable(cfg Config) []string {
	ws, _ := filepath.EvalSymlinks(cfg.Workspace)
	var out []string
	for _, w := range cfg.WritablePaths {
		p, err := filepath.EvalSymlinks(w)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			continue
		}
		if ws != "" && (pathtree.Within(p, ws) || pathtree.Within(ws, p)) {
			continue
		}
		if slices.ContainsFunc(out, func(o string) bool { return pathtree.Within(p, o) || pathtree.Within(o, p) }) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Learned returns, once Wait has returned, the policy it needed, and
// removes the run's throwaway layers and closes its sandbox. Call it once.
func (l *Learning) Learned() (*Learned, error) {
	defer func() {
		l.sb.Close()
		removeAll(l.dir)
	}()
	report := l.Report()
	seen := learn.Seen{
		Home:             l.sb.spec.Home,
		HomeWrites:       layerWrites(filepath.Join(l.dir, "home", "upper"), l.sb.spec.Home),
		Connections:      l.conns.list(),
		Writable:         append([]string{l.sb.spec.Workspace}, canonicalOr(l.base.WritablePaths)...),
		Network:          string(l.base.Network),
		Domains:          l.base.AllowedDomains,
		CredentialStores: l.sb.spec.DefaultHidden,
		Protected:        ProtectedNames(),
		Given:            l.base.given(),
	}
	if seen.Network == "" {
		seen.Network = string(NetworkHost)
	}
	for _, v := range report {
		seen.Events = append(seen.Events, learn.Event{Kind: string(v.Kind), Target: v.Target, Rule: v.Rule, Process: v.Process, Count: v.Count, Probe: v.Probe})
	}
	seen.Events = append(seen.Events, l.nearLimits(report)...)
	p := learn.Build(seen)
	out := &Learned{Report: report, Notes: p.Notes, policy: p}
	for _, e := range p.Entries {
		if !e.Given {
			out.Entries = append(out.Entries, LearnedEntry{Key: e.Key, Value: e.Value, Why: e.Why, Weakens: e.Weakens, Warning: e.Warning})
		}
	}
	out.Config = l.base.withLearned(p)
	return out, nil
}

// withLearned is c with p's entries in force added.
func (c Config) withLearned(p *learn.Policy) Config {
	unq := func(v string) string {
		if s, err := strconv.Unquote(v); err == nil {
			return s
		}
		return v
	}
	for _, e := range p.Entries {
		if e.Weakens != "" || e.Given {
			continue
		}
		v := unq(e.Value)
		switch e.Key {
		case "writable_paths":
			c.WritablePaths = append(slices.Clone(c.WritablePaths), v)
		case "allowed_domains":
			c.AllowedDomains = append(slices.Clone(c.AllowedDomains), v)
		case "allowed_ips":
			c.AllowedIPs = append(slices.Clone(c.AllowedIPs), v)
		case "allow_unix_sockets":
			c.AllowUnixSockets = true
		case "allow_ptrace":
			c.AllowPtrace = true
		case "network":
			c.Network = Network(v)
		default:
			if name, ok := strings.CutPrefix(e.Key, "limits."); ok {
				c.Limits.Set(Limit(strings.ReplaceAll(name, "_", "-")), v)
			}
		}
	}
	return c
}

// given are c's settings as config entries, so that a learned config
// written on its own holds them too.
func (c Config) given() []learn.Entry {
	var out []learn.Entry
	for _, l := range []struct {
		key   string
		paths bool
		vs    []string
	}{
		{"writable_paths", true, c.WritablePaths}, {"read_only_paths", true, c.ReadOnlyPaths}, {"hidden_paths", true, c.HiddenPaths},
		{"reveal", true, c.Reveal}, {"allowed_domains", false, c.AllowedDomains}, {"denied_domains", false, c.DeniedDomains},
		{"allowed_ips", false, c.AllowedIPs},
	} {
		vs := l.vs
		if l.paths {
			vs = canonicalOr(vs)
		}
		for _, v := range vs {
			out = append(out, learn.Entry{Key: l.key, Value: learn.Quote(v)})
		}
	}
	if c.AllowUnixSockets {
		out = append(out, learn.Entry{Key: "allow_unix_sockets", Value: "true"})
	}
	if c.AllowHome {
		out = append(out, learn.Entry{Key: "allow_home", Value: "true"})
	}
	return out
}

func canonicalOr(paths []string) []string {
	var out []string
	for _, p := range paths {
		if c, err := filepath.EvalSymlinks(p); err == nil {
			p = c
		}
		if a, err := filepath.Abs(p); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// layerWrites are the host paths, under home, of what an overlay's upper
// directory holds: each file, link or whiteout, and each empty directory.
func layerWrites(upper, home string) []string {
	var out []string
	filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == upper {
			return nil
		}
		rel, _ := filepath.Rel(upper, p)
		if d.IsDir() {
			if names, _ := os.ReadDir(p); len(names) > 0 {
				return nil
			}
		}
		out = append(out, filepath.Join(home, rel))
		return nil
	})
	return out
}

// connLog gathers the connections a learning run's proxy made.
type connLog struct {
	mu    sync.Mutex
	conns []learn.Connection
}

func (c *connLog) add(e egress.Connected) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.conns {
		if c.conns[i].Host == e.Host && c.conns[i].Port == e.Port {
			c.conns[i].Count++
			return
		}
	}
	lc := learn.Connection{Host: e.Host, Port: e.Port, Blocked: e.Blocked, Count: 1}
	if e.Addr.IsValid() {
		lc.Addr = e.Addr.String()
	}
	c.conns = append(c.conns, lc)
}

func (c *connLog) list() []learn.Connection {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.conns)
}

// removeAll is os.RemoveAll for trees whose directories the owner cannot
// list: overlayfs makes its work directory with mode 0.
func removeAll(dir string) error {
	filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if de != nil && de.IsDir() && de.Type()&fs.ModeSymlink == 0 {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
