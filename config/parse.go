package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// The document as decoded, before defaults and checks. Pointers tell a key
// left out from one set to its zero value.
type fileDoc struct {
	Defaults *defaultsDoc       `toml:"defaults"`
	Agents   []agentDoc         `toml:"agents"`
	Zones    map[string]zoneDoc `toml:"zones"`
}

// defaultsDoc is [defaults]: what every agent's tables start from.
type defaultsDoc struct {
	Sandbox *sandboxDoc `toml:"sandbox"`
	Tools   *toolsDoc   `toml:"tools"`
}

type agentDoc struct {
	ID          *string     `toml:"id"`
	MainSession *string     `toml:"main_session"`
	Sandbox     *sandboxDoc `toml:"sandbox"`
	Tools       *toolsDoc   `toml:"tools"`
}

// toolsDoc is a tool policy table, [defaults.tools] or [agents.tools].
type toolsDoc struct {
	Allow []string `toml:"allow"`
	Deny  []string `toml:"deny"`
}

type sandboxDoc struct {
	Mode           *string  `toml:"mode"`
	Workspace      *string  `toml:"workspace"`
	WritablePaths  []string `toml:"writable_paths"`
	ReadOnlyPaths  []string `toml:"read_only_paths"`
	HiddenPaths    []string `toml:"hidden_paths"`
	Network        *string  `toml:"network"`
	AllowedDomains []string `toml:"allowed_domains"`
	DeniedDomains  []string `toml:"denied_domains"`
	AllowedIPs     []string `toml:"allowed_ips"`
	Fallback       *string  `toml:"fallback"`
	Env            []string `toml:"env"`
	AllowPlanting  []string `toml:"allow_planting"`
	Protect        []string `toml:"protect"`
	Reveal         []string `toml:"reveal"`
	AllowHome      *bool    `toml:"allow_home"`

	AllowUnixSockets *bool    `toml:"allow_unix_sockets"`
	AllowPtrace      *bool    `toml:"allow_ptrace"`
	Changeset        *string  `toml:"changeset"`
	ChangesetPaths   []string `toml:"changeset_paths"`
	ProxyConnections any      `toml:"proxy_connections"` // a number, or "none"
	HostPorts        []any    `toml:"host_ports"`        // numbers, or "PORT/tcp"
	Publish          []string `toml:"publish"`
	PublishAny       *bool    `toml:"publish_any"`

	Limits          *limitsDoc `toml:"limits"`
	Scope           *string    `toml:"scope"`
	WorkspaceAccess *string    `toml:"workspace_access"`
	Bootstrap       []string   `toml:"bootstrap_files"`
	StateDir        *string    `toml:"state_dir"`
	PersistHome     *bool      `toml:"persist_home"`
	PruneIdle       *string    `toml:"prune_idle"`
	PruneMaxAge     *string    `toml:"prune_max_age"`
	MediaDir        *string    `toml:"media_dir"`
	Binds           []bindDoc  `toml:"binds"`
	RealPaths       *bool      `toml:"real_paths_fallback"`

	Zones []declDoc `toml:"zones"`

	Secrets []secretDoc `toml:"secrets"`
}

// limitsDoc is [agents.sandbox.limits]: each value as the CLI's flag takes
// it ("512M", "30s", "none"), or a number where the limit is one.
type limitsDoc struct {
	Memory    any `toml:"memory"`
	Pids      any `toml:"pids"`
	CPUs      any `toml:"cpus"`
	TmpSize   any `toml:"tmp_size"`
	FileSize  any `toml:"file_size"`
	OpenFiles any `toml:"open_files"`
	CPUTime   any `toml:"cpu_time"`
}

// bindDoc is one entry of binds: a host path shown at another path.
type bindDoc struct {
	Source   *string `toml:"source"`
	Dest     *string `toml:"dest"`
	ReadOnly *bool   `toml:"read_only"`
}

// schema says what each key holds, by path with indices written "[]". It
// turns the decoder's messages, which name Go types, into ones about the
// file, and lists the keys a misspelt one could have meant.
var schema = func() map[string]string {
	m := map[string]string{
		"defaults":              "a table",
		"defaults.sandbox":      "a table",
		"agents":                "an array of tables",
		"agents[]":              "a table",
		"agents[].id":           "a string",
		"agents[].main_session": "a string",
		"agents[].sandbox":      "a table",
		"defaults.tools":        "a table",
		"defaults.tools.allow":  "an array of strings",
		"defaults.tools.deny":   "an array of strings",
		"agents[].tools":        "a table",
		"agents[].tools.allow":  "an array of strings",
		"agents[].tools.deny":   "an array of strings",
	}
	for _, keys := range []map[string]string{sandboxKeys, secretKeys} {
		for k, v := range keys {
			m["agents[].sandbox."+k] = v
			m["defaults.sandbox."+k] = v
		}
	}
	for k, v := range zoneKeys {
		m[k] = v
	}
	return m
}()

// zoneKeys are the project's [zones.NAME] tables ("*" for any name).
var zoneKeys = map[string]string{
	"zones":                   "a table",
	"zones.*":                 "a table",
	"zones.*.path":            "a string",
	"zones.*.mode":            "a string",
	"zones.*.approval":        "a table",
	"zones.*.approval.write":  "a string",
	"zones.*.approval.delete": "a string",
}

// sandboxKeys are the keys of a [agents.sandbox] or [defaults.sandbox]
// table.
var sandboxKeys = map[string]string{
	"mode":               "a string",
	"workspace":          "a string",
	"writable_paths":     "an array of strings",
	"read_only_paths":    "an array of strings",
	"hidden_paths":       "an array of strings",
	"network":            "a string",
	"allowed_domains":    "an array of strings",
	"denied_domains":     "an array of strings",
	"allowed_ips":        "an array of strings",
	"proxy_connections":  "an integer or a string",
	"host_ports":         "an array of integers or strings",
	"publish":            "an array of strings",
	"publish_any":        "a boolean",
	"fallback":           "a string",
	"env":                "an array of strings",
	"allow_planting":     "an array of strings",
	"protect":            "an array of strings",
	"reveal":             "an array of strings",
	"allow_home":         "a boolean",
	"allow_unix_sockets": "a boolean",
	"allow_ptrace":       "a boolean",
	"changeset":          "a string",
	"changeset_paths":    "an array of strings",
	"limits":             "a table",
	"limits.memory":      "a string",
	"limits.pids":        "an integer or a string",
	"limits.cpus":        "a number or a string",
	"limits.tmp_size":    "a string",
	"limits.file_size":   "a string",
	"limits.open_files":  "an integer or a string",
	"limits.cpu_time":    "a string",
	"scope":              "a string",
	"workspace_access":   "a string",
	"bootstrap_files":    "an array of strings",
	"state_dir":          "a string",
	"persist_home":       "a boolean",
	"prune_idle":         "a string",
	"prune_max_age":      "a string",
	"media_dir":          "a string",
	"binds":              "an array of tables",
	"binds[]":            "a table",
	"binds[].source":     "a string",
	"binds[].dest":       "a string",
	"binds[].read_only":  "a boolean",

	"real_paths_fallback": "a boolean",

	"zones":                   "an array of tables",
	"zones[]":                 "a table",
	"zones[].name":            "a string",
	"zones[].mode":            "a string",
	"zones[].approval":        "a table",
	"zones[].approval.write":  "a string",
	"zones[].approval.delete": "a string",
}

// Load reads and validates the config file at path. Relative paths inside
// it are resolved against the file's directory.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	cfg, err := parse(data, path)
	if err != nil {
		return nil, err
	}
	return fromFile(cfg, cfg.File), nil
}

// Parse reads and validates a config document from r. name names the
// document in errors, and relative paths inside it are resolved against
// name's directory (itself taken relative to the current directory).
func Parse(r io.Reader, name string) (*Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", name, err)
	}
	return parse(data, name)
}

func parse(data []byte, name string) (*Config, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	idx, idxErr := buildIndex(data)
	if idxErr == nil {
		if err := checkKinds(name, idx); err != nil {
			return nil, err
		}
	}
	var doc fileDoc
	if err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(&doc); err != nil {
		if idxErr != nil {
			idx = nil
		}
		return nil, decodeError(name, err, idx)
	}
	if idxErr != nil {
		// The decoder accepted what the parser refused: report rather
		// than guess positions.
		return nil, &Error{File: name, Msg: idxErr.Error(), Err: idxErr}
	}
	r := &resolver{file: name, dir: filepath.Dir(abs), idx: idx}
	cfg, err := r.config(&doc)
	if err != nil {
		return nil, err
	}
	cfg.File = abs
	return cfg, nil
}

// utf8BOM starts files saved by some editors; TOML parsers refuse it.
var utf8BOM = []byte("\xef\xbb\xbf")

// checkKinds compares every key the schema knows with what the document
// holds there. The decoder would catch most mismatches too, but it accepts
// a [agents] table as a one-agent array and names Go types in its messages.
func checkKinds(name string, idx *index) error {
	for _, e := range idx.entries {
		if want := wants(e.path); want != "" && !compatible(want, e.kind) {
			return &Error{File: name, Line: e.line, Key: e.path, Msg: fmt.Sprintf("want %s, not %s", want, e.kind)}
		}
	}
	return nil
}

// decodeError turns a decoder error into an *Error with the full key path.
// idx is nil when the document does not parse.
func decodeError(name string, err error, idx *index) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		de := &strict.Errors[0]
		line, col := de.Position()
		e := &Error{File: name, Line: line, Key: strings.Join(de.Key(), "."), Msg: "unknown key", Err: err}
		if en, ok := idx.at(line, col); ok {
			e.Key = en.path
			e.Msg = "unknown key" + suggestKeys(parent(en.path))
		}
		return e
	}
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return &Error{File: name, Msg: err.Error(), Err: err}
	}
	line, col := de.Position()
	e := &Error{File: name, Line: line, Msg: strings.TrimPrefix(de.Error(), "toml: "), Err: err}
	if en, ok := idx.at(line, col); ok {
		e.Key = en.path
		if want := wants(en.path); want != "" && !compatible(want, en.kind) {
			e.Msg = fmt.Sprintf("want %s, not %s", want, en.kind)
		}
	}
	return e
}

// wants returns what the schema expects at path, or "" for a key it does
// not know.
func wants(path string) string {
	g := generic(path)
	if w, ok := schema[g]; ok {
		return w
	}
	if elem, ok := strings.CutSuffix(g, "[]"); ok && schema[elem] == "an array of strings" {
		return "a string"
	}
	return ""
}

// suggestKeys lists the keys the schema allows under parent.
func suggestKeys(parent string) string {
	prefix := generic(parent) + "."
	if parent == "" {
		prefix = ""
	}
	var keys []string
	for k := range schema {
		rest, ok := strings.CutPrefix(k, prefix)
		if ok && !strings.ContainsAny(rest, ".[") {
			keys = append(keys, rest)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	slices.Sort(keys)
	return "; want one of " + strings.Join(keys, ", ")
}

// compatible reports whether a value of kind got fits a key that wants
// want. An inline array is "an array" whatever it holds: its elements are
// checked on their own.
func compatible(want, got string) bool {
	switch want {
	case "an integer or a string":
		return got == "an integer" || got == "a string"
	case "a number or a string":
		return got == "an integer" || got == "a float" || got == "a string"
	}
	return want == got || (got == "an array" && strings.HasPrefix(want, "an array"))
}

// generic replaces every index in path with "[]", and a zone's name with
// "*".
func generic(path string) string {
	if rest, ok := strings.CutPrefix(path, "zones."); ok {
		_, after, more := strings.Cut(rest, ".")
		path = "zones.*"
		if more {
			path += "." + after
		}
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '[')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		b.WriteString(path[:i])
		b.WriteString("[]")
		j := strings.IndexByte(path[i:], ']')
		if j < 0 {
			return b.String()
		}
		path = path[i+j+1:]
	}
}
