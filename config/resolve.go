package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/corralhq/corral"
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
	seen := map[string]int{}
	for i := range doc.Agents {
		a, err := r.agent(fmt.Sprintf("agents[%d]", i), &doc.Agents[i])
		if err != nil {
			return nil, err
		}
		if sd := doc.Agents[i].Sandbox; sd != nil {
			if a.Sandbox.Zones, err = r.decls(fmt.Sprintf("agents[%d].sandbox.zones", i), sd.Zones, cfg.Zones); err != nil {
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

func (r *resolver) agent(key string, d *agentDoc) (Agent, error) {
	id, err := r.id(key+".id", d.ID)
	if err != nil {
		return Agent{}, err
	}
	sb, err := r.sandbox(key+".sandbox", d.Sandbox)
	if err != nil {
		return Agent{}, err
	}
	return Agent{ID: id, Sandbox: sb}, nil
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
	s.AllowUnixSockets = d.AllowUnixSockets != nil && *d.AllowUnixSockets
	s.AllowPtrace = d.AllowPtrace != nil && *d.AllowPtrace
	s.AllowHome = d.AllowHome != nil && *d.AllowHome
	return s, nil
}

// choices checks the keys that take one of a few words.
func (r *resolver) choices(key string, d *sandboxDoc, s *Sandbox) (err error) {
	if s.Mode, err = pick(r, key+".mode", "mode", d.Mode, s.Mode, corral.ModeEnabled, corral.ModeDisabled); err != nil {
		return err
	}
	if s.Network, err = pick(r, key+".network", "network", d.Network, s.Network, corral.NetworkHost, corral.NetworkNone); err != nil {
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
	return "", r.errorf(key, "%q is not a %s; want %s", *v, what, strings.Join(quoted, " or "))
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

func (r *resolver) allowPlanting(key string, names []string) ([]string, error) {
	for i, n := range names {
		if !slices.Contains(corral.ProtectedNames(), n) {
			return nil, r.errorf(fmt.Sprintf("%s[%d]", key, i), "%q is not a protected name; want one of %s",
				n, strings.Join(corral.ProtectedNames(), ", "))
		}
	}
	return slices.Clone(names), nil
}
