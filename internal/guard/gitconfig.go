package guard

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ConfigEntry is one key of a git config file: section and name lower-cased,
// the subsection as written.
type ConfigEntry struct {
	Key   string // "section.name" or "section.subsection.name"
	Value string
	Bool  bool // a bare name without "=": boolean true
}

// ParseConfig reads a git config file strictly: it accepts what git itself
// writes (sections, quoted subsections, quoted and escaped values, comments)
// and refuses everything git would read in some way this parser might not
// (line continuations, legacy "[section.sub]" headers, a key on a header's
// line, NUL bytes, unknown escapes), so that a config it accepts means to git
// what it means here.
func ParseConfig(b []byte) ([]ConfigEntry, error) {
	s := string(b)
	if strings.ContainsRune(s, 0) {
		return nil, errors.New("contains a NUL byte")
	}
	if strings.HasPrefix(s, "\xef\xbb\xbf") {
		return nil, errors.New("starts with a byte order mark")
	}
	var out []ConfigEntry
	section := ""
	lines := strings.Split(s, "\n")
	for n, line := range lines {
		if n < len(lines)-1 {
			// git reads CR LF as LF, but a CR at the very end as a CR.
			line = strings.TrimSuffix(line, "\r")
		}
		t := strings.TrimLeft(line, " \t")
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' {
			sec, err := parseHeader(t)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n+1, err)
			}
			section = sec
			continue
		}
		if section == "" {
			return nil, fmt.Errorf("line %d: key outside a section", n+1)
		}
		e, err := parseKey(t)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		e.Key = section + "." + e.Key
		out = append(out, e)
	}
	return out, nil
}

func isNameChar(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	case c >= '0' && c <= '9', c == '-':
		return !first
	}
	return false
}

func parseHeader(t string) (string, error) {
	end := strings.LastIndexByte(t, ']')
	if end < 0 {
		return "", errors.New("unterminated section header")
	}
	if rest := strings.TrimLeft(t[end+1:], " \t"); rest != "" && rest[0] != '#' && rest[0] != ';' {
		return "", errors.New("text after a section header")
	}
	inner := t[1:end]
	name, sub, hasSub := strings.Cut(inner, " ")
	if name == "" {
		return "", errors.New("empty section name")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isNameChar(c, false) {
			return "", fmt.Errorf("section name %q: legacy or invalid syntax", name)
		}
	}
	name = strings.ToLower(name)
	if !hasSub {
		return name, nil
	}
	sub = strings.TrimLeft(sub, " \t")
	if len(sub) < 2 || sub[0] != '"' || sub[len(sub)-1] != '"' {
		return "", errors.New("subsection not quoted")
	}
	var b strings.Builder
	body := sub[1 : len(sub)-1]
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch c {
		case '"':
			return "", errors.New("unescaped quote in subsection")
		case '\\':
			i++
			if i >= len(body) || (body[i] != '"' && body[i] != '\\') {
				return "", errors.New("unknown escape in subsection")
			}
			c = body[i]
		}
		b.WriteByte(c)
	}
	return name + "." + b.String(), nil
}

func parseKey(t string) (ConfigEntry, error) {
	i := 0
	for i < len(t) && isNameChar(t[i], i == 0) {
		i++
	}
	if i == 0 {
		return ConfigEntry{}, fmt.Errorf("invalid key in %q", t)
	}
	e := ConfigEntry{Key: strings.ToLower(t[:i])}
	// git reads a comment after a value, but not after a bare name.
	rest := strings.TrimLeft(t[i:], " \t")
	if rest == "" {
		e.Bool = true
		return e, nil
	}
	if rest[0] != '=' {
		return ConfigEntry{}, fmt.Errorf("invalid key in %q", t)
	}
	v, err := parseValue(rest[1:])
	if err != nil {
		return ConfigEntry{}, fmt.Errorf("%s: %w", e.Key, err)
	}
	e.Value = v
	return e, nil
}

// parseValue reads a value as git's parse_value does: a blank outside
// quotes counts as a space only once the value holds something, and is
// kept only if more follows.
func parseValue(s string) (string, error) {
	var b strings.Builder
	quoted := false
	spaces := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !quoted && (c == ' ' || c == '\t' || c == '\r') {
			if b.Len() > 0 {
				spaces++
			}
			continue
		}
		if !quoted && (c == '#' || c == ';') {
			break
		}
		b.WriteString(strings.Repeat(" ", spaces))
		spaces = 0
		switch c {
		case '"':
			quoted = !quoted
			continue
		case '\\':
			i++
			if i >= len(s) {
				return "", errors.New("line continuation")
			}
			switch s[i] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case '\\', '"':
				c = s[i]
			default:
				return "", fmt.Errorf("unknown escape \\%c", s[i])
			}
		}
		b.WriteByte(c)
	}
	if quoted {
		return "", errors.New("unterminated quote")
	}
	return b.String(), nil
}

// configChanges returns the keys whose values differ between old and new.
func configChanges(old, new []ConfigEntry) []string {
	values := func(es []ConfigEntry) map[string][]string {
		m := map[string][]string{}
		for _, e := range es {
			v := e.Value
			if e.Bool {
				v = "\x00true"
			}
			m[e.Key] = append(m[e.Key], v)
		}
		return m
	}
	o, n := values(old), values(new)
	var keys []string
	for k, v := range n {
		if !slices.Equal(v, o[k]) {
			keys = append(keys, k)
		}
	}
	for k := range o {
		if _, ok := n[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// plainKeys are config keys a command may set: none runs a program or
// changes where git reads config, hooks or objects from.
var plainKeys = []string{
	"user.name", "user.email",
	"core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
	"core.ignorecase", "core.precomposeunicode", "core.symlinks", "core.autocrlf", "core.eol",
	"core.safecrlf", "core.quotepath", "core.abbrev",
	"init.defaultbranch",
	"extensions.objectformat", "extensions.worktreeconfig", "extensions.refstorage",
	"extensions.preciousobjects", "extensions.noop",
	"gc.auto", "gc.autopacklimit", "gc.autodetach", "gc.pruneexpire", "gc.worktreepruneexpire",
	"gc.reflogexpire", "gc.reflogexpireunreachable", "gc.packrefs",
	"pull.rebase", "pull.ff", "push.default", "push.autosetupremote",
	"merge.ff", "merge.conflictstyle", "rebase.autosquash", "rebase.autostash", "fetch.prune",
}

// subsectionKeys are the names allowed under "section.<anything>.".
var subsectionKeys = map[string][]string{
	"branch":    {"remote", "merge", "rebase", "pushremote", "description"},
	"remote":    {"url", "pushurl", "fetch", "push", "prune", "tagopt", "mirror"},
	"submodule": {"url", "active", "branch", "update"},
}

// AllowedConfig reports whether a command may give key this value, and why
// not.
func AllowedConfig(key, value string) (bool, string) {
	if slices.Contains(plainKeys, key) {
		return true, ""
	}
	sec, rest, _ := strings.Cut(key, ".")
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || !slices.Contains(subsectionKeys[sec], rest[i+1:]) {
		return false, "not an allowed key"
	}
	switch name := rest[i+1:]; {
	case name == "url" || name == "pushurl" || sec == "branch" && (name == "remote" || name == "pushremote"):
		// A branch's remote that names no configured one is a URL to
		// git fetch and push.
		if bad := badURL(value); bad != "" {
			return false, bad
		}
	case name == "update" && strings.HasPrefix(strings.TrimSpace(value), "!"):
		return false, "runs a command"
	}
	return true, ""
}

// badURL says why a remote URL would run a program of the command's
// choosing, or "".
func badURL(u string) string {
	if strings.HasPrefix(u, "-") {
		return "starts with a dash"
	}
	if transport, _, ok := strings.Cut(u, "::"); ok {
		switch strings.ToLower(transport) {
		case "ext", "fd":
			return "uses the " + transport + ":: transport"
		}
	}
	return ""
}
