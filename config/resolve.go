package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/egress"
)

// resolver checks a decoded document and fills in defaults, naming the key
// and line of the first thing wrong.
type resolver struct {
	file string // as given, for messages
	dir  string // absolute; anchors relative paths
	idx  *index
}

func (r *resolver) errorf(key, format string, args ...any) error {
	return &Error{File: r.file, Line: r.idx.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

func (r *resolver) config(doc *fileDoc) (*Config, error) {
	if len(doc.Agents) == 0 {
		return nil, r.errorf("agents", "no agents; add an [[agents]] table with an id")
	}
	cfg := &Config{Agents: make([]Agent, 0, len(doc.Agents))}
	var err error
	if cfg.Zones, err = r.projectZones(doc.Zones); err != nil {
		return nil, err
	}
	var defaults *sandboxDoc
	if doc.Defaults != nil && doc.Defaults.Sandbox != nil {
		defaults = doc.Defaults.Sandbox
		// Checked on its own, so that an error names the key where it is.
		if _, err := r.sandbox("defaults.sandbox", defaults); err != nil {
			return nil, err
		}
		if _, err := r.decls("defaults.sandbox.zones", defaults.Zones, cfg.Zones); err != nil {
			return nil, err
		}
	}
	var global Tools
	if doc.Defaults != nil {
		if global, err = r.tools("defaults.tools", doc.Defaults.Tools); err != nil {
			return nil, err
		}
	}
	seen := map[string]int{}
	for i := range doc.Agents {
		d := doc.Agents[i]
		d.Sandbox = mergeSandbox(defaults, d.Sandbox)
		a, err := r.agent(fmt.Sprintf("agents[%d]", i), &d, global)
		if err != nil {
			return nil, err
		}
		if d.Sandbox != nil {
			if a.Sandbox.Zones, err = r.decls(fmt.Sprintf("agents[%d].sandbox.zones", i), d.Sandbox.Zones, cfg.Zones); err != nil {
				return nil, err
			}
		}
		if j, dup := seen[a.ID]; dup {
			return nil, r.errorf(fmt.Sprintf("agents[%d].id", i), "duplicate id %q, first used by agents[%d] on line %d",
				a.ID, j, r.idx.line(fmt.Sprintf("agents[%d].id", j)))
		}
		seen[a.ID] = i
		cfg.Agents = append(cfg.Agents, a)
	}
	return cfg, nil
}

func (r *resolver) agent(key string, d *agentDoc, global Tools) (Agent, error) {
	id, err := r.id(key+".id", d.ID)
	if err != nil {
		return Agent{}, err
	}
	sb, err := r.sandbox(key+".sandbox", d.Sandbox)
	if err != nil {
		return Agent{}, err
	}
	own, err := r.tools(key+".tools", d.Tools)
	if err != nil {
		return Agent{}, err
	}
	main := defaultMainSession
	if d.MainSession != nil {
		if main = *d.MainSession; main == "" || strings.ContainsRune(main, 0) {
			return Agent{}, r.errorf(key+".main_session", "want a session key that is not empty")
		}
	}
	return Agent{ID: id, MainSession: main, Sandbox: sb, Tools: layerTools(own, global)}, nil
}

// tools checks a tool policy table. A pattern holds the characters of a
// tool name and '*', so that a typo cannot silently match nothing.
func (r *resolver) tools(key string, d *toolsDoc) (Tools, error) {
	if d == nil {
		return Tools{}, nil
	}
	for _, l := range []struct {
		field string
		pats  []string
	}{{"allow", d.Allow}, {"deny", d.Deny}} {
		for i, pat := range l.pats {
			bad := pat == "" || strings.IndexFunc(pat, func(c rune) bool {
				return c > unicode.MaxASCII || !(c == '*' || c == '_' || c == '-' || c == '.' || unicode.IsLetter(c) || unicode.IsDigit(c))
			}) >= 0
			if bad {
				return Tools{}, r.errorf(fmt.Sprintf("%s.%s[%d]", key, l.field, i),
					"%q is not a tool name; use letters, digits, '_', '-', '.' and the wildcard '*'", pat)
			}
		}
	}
	return Tools{Allow: slices.Clone(d.Allow), Deny: slices.Clone(d.Deny)}, nil
}

// layerTools takes each list from the agent when it sets it (an empty list
// included), else from the defaults.
func layerTools(agent, global Tools) Tools {
	if agent.Allow == nil {
		agent.Allow = slices.Clone(global.Allow)
	}
	if agent.Deny == nil {
		agent.Deny = slices.Clone(global.Deny)
	}
	return agent
}

// id accepts letters, digits, '.', '_' and '-': programs build paths and
// log lines from it.
func (r *resolver) id(key string, v *string) (string, error) {
	if v == nil {
		return "", r.errorf(key, "required")
	}
	id := *v
	valid := id != "" && id != "." && id != ".." && strings.IndexFunc(id, func(c rune) bool {
		return c > unicode.MaxASCII || !(c == '.' || c == '_' || c == '-' || unicode.IsLetter(c) || unicode.IsDigit(c))
	}) < 0
	if !valid {
		return "", r.errorf(key, "%q is not a valid id; use letters, digits, '.', '_' or '-'", id)
	}
	return id, nil
}

func (r *resolver) sandbox(key string, d *sandboxDoc) (Sandbox, error) {
	s := defaultSandbox()
	if d == nil {
		return s, nil
	}
	if err := r.choices(key, d, &s); err != nil {
		return Sandbox{}, err
	}
	if err := r.locations(key, d, &s); err != nil {
		return Sandbox{}, err
	}
	var err error
	if s.Env, err = r.env(key+".env", d.Env); err != nil {
		return Sandbox{}, err
	}
	if s.AllowPlanting, err = r.allowPlanting(key+".allow_planting", d.AllowPlanting); err != nil {
		return Sandbox{}, err
	}
	if s.Protect, err = r.protect(key+".protect", d.Protect); err != nil {
		return Sandbox{}, err
	}
	if err := r.egress(key, d, &s); err != nil {
		return Sandbox{}, err
	}
	if err := r.hostNet(key, d, &s); err != nil {
		return Sandbox{}, err
	}
	if s.Limits, err = r.limits(key+".limits", d.Limits); err != nil {
		return Sandbox{}, err
	}
	s.AllowUnixSockets = d.AllowUnixSockets != nil && *d.AllowUnixSockets
	s.AllowPtrace = d.AllowPtrace != nil && *d.AllowPtrace
	s.AllowHome = d.AllowHome != nil && *d.AllowHome
	s.RealPathsFallback = d.RealPaths != nil && *d.RealPaths
	if d.PersistHome != nil {
		s.PersistHome = *d.PersistHome
	}
	if err := r.runtime(key, d, &s); err != nil {
		return Sandbox{}, err
	}
	return s, nil
}

// runtime resolves the keys of persistent sandboxes.
func (r *resolver) runtime(key string, d *sandboxDoc, s *Sandbox) (err error) {
	if s.Scope, err = pick(r, key+".scope", "scope", d.Scope, s.Scope, ScopeSession, ScopeAgent, ScopeShared); err != nil {
		return err
	}
	if s.WorkspaceAccess, err = pick(r, key+".workspace_access", "workspace access", d.WorkspaceAccess, s.WorkspaceAccess, AccessNone, AccessRO, AccessRW); err != nil {
		return err
	}
	if s.Bootstrap, err = r.paths(key+".bootstrap_files", d.Bootstrap); err != nil {
		return err
	}
	for _, p := range []struct {
		key string
		v   *string
		out *string
	}{{".state_dir", d.StateDir, &s.StateDir}, {".media_dir", d.MediaDir, &s.MediaDir}} {
		if p.v != nil {
			if *p.out, err = r.path(key+p.key, *p.v); err != nil {
				return err
			}
		}
	}
	if s.Binds, err = r.binds(key+".binds", d.Binds); err != nil {
		return err
	}
	if s.Secrets, err = r.secrets(key+".secrets", d.Secrets); err != nil {
		return err
	}
	if s.PruneIdle, err = r.duration(key+".prune_idle", d.PruneIdle, s.PruneIdle); err != nil {
		return err
	}
	s.PruneMaxAge, err = r.duration(key+".prune_max_age", d.PruneMaxAge, s.PruneMaxAge)
	return err
}

// binds resolves binds entries: source relative to the file, dest an
// absolute clean path inside the sandbox (corral.New checks the rest).
func (r *resolver) binds(key string, ds []bindDoc) ([]corral.Bind, error) {
	var out []corral.Bind
	for i, d := range ds {
		k := fmt.Sprintf("%s[%d]", key, i)
		if d.Source == nil || d.Dest == nil {
			return nil, r.errorf(k, "want source and dest")
		}
		src, err := r.path(k+".source", *d.Source)
		if err != nil {
			return nil, err
		}
		dest := *d.Dest
		if !filepath.IsAbs(dest) || filepath.Clean(dest) != dest || strings.ContainsRune(dest, 0) {
			return nil, r.errorf(k+".dest", "%q: want an absolute, clean path inside the sandbox", dest)
		}
		out = append(out, corral.Bind{Source: src, Dest: dest, ReadOnly: d.ReadOnly != nil && *d.ReadOnly})
	}
	return out, nil
}

// duration parses a Go duration ("24h", "90m"); "0" turns the rule off.
func (r *resolver) duration(key string, v *string, def time.Duration) (time.Duration, error) {
	if v == nil {
		return def, nil
	}
	d, err := time.ParseDuration(*v)
	if err != nil || d < 0 {
		return 0, r.errorf(key, "%q is not a duration; want one like \"24h\" or \"90m\", or \"0\" for never", *v)
	}
	return d, nil
}

// choices checks the keys that take one of a few words.
func (r *resolver) choices(key string, d *sandboxDoc, s *Sandbox) (err error) {
	if s.Sessions, err = pick(r, key+".mode", "mode", d.Mode, s.Sessions, SessionsOff, SessionsNonMain, SessionsAll, "enabled", "disabled"); err != nil {
		return err
	}
	switch s.Sessions {
	case "enabled":
		s.Sessions = SessionsAll
	case "disabled":
		s.Sessions = SessionsOff
	}
	if s.Mode = corral.ModeEnabled; s.Sessions == SessionsOff {
		s.Mode = corral.ModeDisabled
	}
	if s.Network, err = pick(r, key+".network", "network", d.Network, s.Network, corral.NetworkHost, corral.NetworkNone, corral.NetworkAllow); err != nil {
		return err
	}
	s.Fallback, err = pick(r, key+".fallback", "fallback", d.Fallback, s.Fallback, FallbackFail, FallbackWarn)
	return err
}

// locations resolves the keys that hold paths.
func (r *resolver) locations(key string, d *sandboxDoc, s *Sandbox) (err error) {
	if d.Workspace != nil {
		if s.Workspace, err = r.path(key+".workspace", *d.Workspace); err != nil {
			return err
		}
	}
	if s.WritablePaths, err = r.paths(key+".writable_paths", d.WritablePaths); err != nil {
		return err
	}
	if s.ReadOnlyPaths, err = r.paths(key+".read_only_paths", d.ReadOnlyPaths); err != nil {
		return err
	}
	if s.HiddenPaths, err = r.paths(key+".hidden_paths", d.HiddenPaths); err != nil {
		return err
	}
	if d.Changeset != nil {
		if s.Changeset, err = r.path(key+".changeset", *d.Changeset); err != nil {
			return err
		}
	}
	if s.ChangesetPaths, err = r.paths(key+".changeset_paths", d.ChangesetPaths); err != nil {
		return err
	}
	s.Reveal, err = r.paths(key+".reveal", d.Reveal)
	return err
}

// pick returns def when v is absent, else v when it is one of allowed.
func pick[T ~string](r *resolver, key, what string, v *string, def T, allowed ...T) (T, error) {
	if v == nil {
		return def, nil
	}
	if slices.Contains(allowed, T(*v)) {
		return T(*v), nil
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	list := quoted[len(quoted)-1]
	if len(quoted) > 1 {
		list = strings.Join(quoted[:len(quoted)-1], ", ") + " or " + list
	}
	return "", r.errorf(key, "%q is not a %s; want %s", *v, what, list)
}

func (r *resolver) paths(key string, ps []string) ([]string, error) {
	if ps == nil {
		return nil, nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		var err error
		if out[i], err = r.path(fmt.Sprintf("%s[%d]", key, i), p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// path makes p absolute against the config file's directory, so the file
// means the same wherever the program is started. Whether it exists is for
// corral.New to say when the sandbox is built: a reload must not fail
// because a directory is briefly missing.
func (r *resolver) path(key, p string) (string, error) {
	switch {
	case p == "":
		return "", r.errorf(key, "empty path")
	case strings.ContainsRune(p, 0):
		return "", r.errorf(key, "%q contains a NUL byte", p)
	case strings.HasPrefix(p, "~"):
		return "", r.errorf(key, "%q: ~ is not expanded; write the full path", p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.dir, p)
	}
	return filepath.Clean(p), nil
}

// env never echoes an entry: a malformed one may well hold a secret value.
func (r *resolver) env(key string, kvs []string) ([]string, error) {
	for i, kv := range kvs {
		name, _, _ := strings.Cut(kv, "=")
		bad := name == "" || strings.ContainsRune(kv, 0) || strings.IndexFunc(name, func(c rune) bool {
			return unicode.IsSpace(c) || unicode.IsControl(c)
		}) >= 0
		if bad {
			return nil, r.errorf(fmt.Sprintf("%s[%d]", key, i), "want KEY or KEY=VALUE, with a KEY that is not empty and has no spaces")
		}
	}
	return slices.Clone(kvs), nil
}

// egress checks network = "allow"'s lists, each entry alone so that the
// error names its key, and its connection cap; they need that network, so
// that a list never looks like a restriction that is not in force.
func (r *resolver) egress(key string, d *sandboxDoc, s *Sandbox) error {
	lists := []struct {
		key     string
		entries []string
		dst     *[]string
	}{
		{key + ".allowed_domains", d.AllowedDomains, &s.AllowedDomains},
		{key + ".denied_domains", d.DeniedDomains, &s.DeniedDomains},
		{key + ".allowed_ips", d.AllowedIPs, &s.AllowedIPs},
	}
	for i, l := range lists {
		if len(l.entries) > 0 && s.Network != corral.NetworkAllow {
			return r.errorf(l.key, "needs network = %q", corral.NetworkAllow)
		}
		for j, e := range l.entries {
			one := [3][]string{}
			one[i] = []string{e}
			if _, err := egress.ParseRules(one[0], one[1], one[2]); err != nil {
				return r.errorf(fmt.Sprintf("%s[%d]", l.key, j), "%q: %s", e, entryReason(err, e))
			}
		}
		*l.dst = slices.Clone(l.entries)
	}
	return r.proxyConnections(key+".proxy_connections", d.ProxyConnections, s)
}

// proxyConnections reads proxy_connections as the CLI reads
// --proxy-connections: a number above zero, or "none".
func (r *resolver) proxyConnections(key string, v any, s *Sandbox) error {
	if v == nil {
		return nil
	}
	if s.Network != corral.NetworkAllow {
		return r.errorf(key, "needs network = %q", corral.NetworkAllow)
	}
	n, err := corral.ParseProxyConnections(fmt.Sprint(v))
	if err != nil {
		return r.errorf(key, "%q: %v", fmt.Sprint(v), err)
	}
	s.ProxyConnections = n
	return nil
}

func (r *resolver) allowPlanting(key string, names []string) ([]string, error) {
	for i, n := range names {
		if !slices.Contains(corral.ProtectedNames(), n) {
			return nil, r.errorf(fmt.Sprintf("%s[%d]", key, i), "%q is not a protected name; want one of %s",
				n, strings.Join(corral.ProtectedNames(), ", "))
		}
	}
	return slices.Clone(names), nil
}

// protect checks each name as corral.Config.Protect will.
func (r *resolver) protect(key string, names []string) ([]string, error) {
	for i, n := range names {
		if err := corral.CheckProtectName(n); err != nil {
			return nil, r.errorf(fmt.Sprintf("%s[%d]", key, i), "%q: %v", n, err)
		}
	}
	return slices.Clone(names), nil
}

// entryReason is what a network list entry's parse error says is wrong
// with it, without the entry, which the message names already.
func entryReason(err error, entry string) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, strconv.Quote(entry)+": "); ok {
		return after
	}
	return strings.TrimPrefix(msg, "egress: ")
}

// limits reads [agents.sandbox.limits] as corral.Limits.Set reads the
// CLI's flags; a key left out keeps its default.
func (r *resolver) limits(key string, d *limitsDoc) (corral.Limits, error) {
	var l corral.Limits
	if d == nil {
		return l, nil
	}
	for _, f := range []struct {
		name  corral.Limit
		key   string
		value any
	}{
		{corral.LimitMemory, "memory", d.Memory}, {corral.LimitPids, "pids", d.Pids},
		{corral.LimitCPUs, "cpus", d.CPUs}, {corral.LimitTmpSize, "tmp_size", d.TmpSize},
		{corral.LimitFileSize, "file_size", d.FileSize}, {corral.LimitOpenFiles, "open_files", d.OpenFiles},
		{corral.LimitCPUTime, "cpu_time", d.CPUTime},
	} {
		if f.value == nil {
			continue
		}
		v := fmt.Sprint(f.value)
		if err := l.Set(f.name, v); err != nil {
			return l, r.errorf(key+"."+f.key, "%q: %v", v, err)
		}
	}
	return l, nil
}

// hostNet checks host_ports and publish, which need a network of the
// sandbox's own: network = "none" or "allow".
func (r *resolver) hostNet(key string, d *sandboxDoc, s *Sandbox) error {
	own := s.Network == corral.NetworkNone || s.Network == corral.NetworkAllow
	for i, v := range d.HostPorts {
		k := fmt.Sprintf("%s.host_ports[%d]", key, i)
		if !own {
			return r.errorf(k, "needs network = %q or %q", corral.NetworkNone, corral.NetworkAllow)
		}
		n, err := corral.ParseHostPort(fmt.Sprint(v))
		if err != nil {
			return r.errorf(k, "%q: %v", fmt.Sprint(v), err)
		}
		s.HostPorts = append(s.HostPorts, n)
	}
	s.PublishAny = d.PublishAny != nil && *d.PublishAny
	for i, e := range d.Publish {
		k := fmt.Sprintf("%s.publish[%d]", key, i)
		if !own {
			return r.errorf(k, "needs network = %q or %q", corral.NetworkNone, corral.NetworkAllow)
		}
		host, _, err := corral.ParsePublish(e)
		if err != nil {
			return r.errorf(k, "%q: %v", e, err)
		}
		if !host.Addr().IsLoopback() && !s.PublishAny {
			return r.errorf(k, "%q: host address %s is not loopback: other machines could reach the command's server; publish_any = true allows it", e, host.Addr())
		}
		s.Publish = append(s.Publish, e)
	}
	return nil
}
