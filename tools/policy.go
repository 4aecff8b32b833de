package tools

import (
	"fmt"
	"slices"
	"strings"
)

// Policy decides which tools an agent is offered, by tool name.
//
// Allow and Deny hold tool names in which `*` matches any run of
// characters ("*_file", "*"). A name is allowed when no Deny pattern
// matches it (deny wins) and Allow is empty or one of its patterns
// matches it. The zero Policy allows every tool.
//
// A nil list and an empty one differ only when policies are layered with
// [Layered]: nil means "not set here", an empty list means "set, to
// nothing".
type Policy struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// DefaultPolicy returns the built-in level under every configured one: every
// tool allowed.
func DefaultPolicy() Policy { return Policy{} }

// Allows reports whether the policy offers the tool called name.
func (p Policy) Allows(name string) bool {
	if slices.ContainsFunc(p.Deny, func(pat string) bool { return matchName(pat, name) }) {
		return false
	}
	return len(p.Allow) == 0 || slices.ContainsFunc(p.Allow, func(pat string) bool { return matchName(pat, name) })
}

// Filter returns the names p allows, in their order.
func (p Policy) Filter(names []string) []string {
	var out []string
	for _, n := range names {
		if p.Allows(n) {
			out = append(out, n)
		}
	}
	return out
}

// Validate refuses empty patterns and patterns with characters a tool name
// cannot hold, so that a typo does not silently match nothing.
func (p Policy) Validate() error {
	for _, l := range []struct {
		field string
		pats  []string
	}{{"allow", p.Allow}, {"deny", p.Deny}} {
		for i, pat := range l.pats {
			if err := checkPattern(pat); err != nil {
				return fmt.Errorf("tools.%s[%d]: %w", l.field, i, err)
			}
		}
	}
	return nil
}

func checkPattern(pat string) error {
	if pat == "" {
		return fmt.Errorf("empty tool name")
	}
	if i := strings.IndexFunc(pat, func(c rune) bool { return !isNameRune(c) }); i >= 0 {
		return fmt.Errorf("%q: tool names hold letters, digits, '_', '-', '.' and the wildcard '*'", pat)
	}
	return nil
}

func isNameRune(c rune) bool {
	return c == '*' || c == '_' || c == '-' || c == '.' ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// Layered resolves policies given from the most specific level (an
// agent's) to the least (the global defaults): each list is taken from
// the first level that sets it (non-nil), else from [DefaultPolicy].
// Allow and Deny are resolved separately, so an agent that only denies a
// tool keeps the global allow list.
func Layered(levels ...Policy) Policy {
	out := DefaultPolicy()
	allowSet, denySet := false, false
	for _, l := range levels {
		if !allowSet && l.Allow != nil {
			out.Allow, allowSet = slices.Clone(l.Allow), true
		}
		if !denySet && l.Deny != nil {
			out.Deny, denySet = slices.Clone(l.Deny), true
		}
	}
	return out
}

// matchName reports whether name matches pat, where '*' matches any run of
// characters, including none. Names are compared exactly otherwise.
func matchName(pat, name string) bool {
	parts := strings.Split(pat, "*")
	if len(parts) == 1 {
		return pat == name
	}
	rest, ok := strings.CutPrefix(name, parts[0])
	if !ok {
		return false
	}
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, mid)
		if i < 0 {
			return false
		}
		rest = rest[i+len(mid):]
	}
	return len(rest) >= len(last) && strings.HasSuffix(rest, last)
}
