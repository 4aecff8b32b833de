// Package sbplcheck checks that Seatbelt profile text (SBPL) is well formed
// without a Mac: forms balanced, strings terminated and escaped, every rule
// shaped as (allow|deny OPERATION... FILTER...), and the parameters the text
// refers to exactly those that are defined.
//
// It is a test aid, not an SBPL compiler: it knows the shape of the profiles
// corral generates, not every operation and filter the real one accepts.
package sbplcheck

import (
	"fmt"
	"strings"
)

// Node is one parsed datum: a list, a string or an atom (symbol, number).
type Node struct {
	Line   int
	IsList bool
	List   []Node
	IsStr  bool
	Regex  bool   // a #"..." string
	Str    string // the string's value, escapes decoded
	Atom   string
}

func (n Node) String() string {
	switch {
	case n.IsList:
		parts := make([]string, len(n.List))
		for i, c := range n.List {
			parts[i] = c.String()
		}
		return "(" + strings.Join(parts, " ") + ")"
	case n.IsStr:
		return fmt.Sprintf("%q", n.Str)
	}
	return n.Atom
}

// Head returns the atom a list starts with, or "".
func (n Node) Head() string {
	if n.IsList && len(n.List) > 0 {
		return n.List[0].Atom
	}
	return ""
}

// Parse reads every top-level datum of src.
func Parse(src string) ([]Node, error) {
	p := &parser{src: src, line: 1}
	var out []Node
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return out, nil
		}
		n, err := p.datum()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
}

type parser struct {
	src  string
	pos  int
	line int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", p.line, fmt.Sprintf(format, args...))
}

// skipSpace skips whitespace and ; comments.
func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == '\n':
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r':
			p.pos++
		case c == ';':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *parser) datum() (Node, error) {
	switch c := p.src[p.pos]; {
	case c == '(':
		return p.list()
	case c == ')':
		return Node{}, p.errorf("unexpected )")
	case c == '"':
		return p.str(false)
	case strings.HasPrefix(p.src[p.pos:], `#"`):
		p.pos++
		return p.str(true)
	}
	return p.atom()
}

func (p *parser) list() (Node, error) {
	n := Node{Line: p.line, IsList: true}
	p.pos++ // (
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return n, fmt.Errorf("line %d: ( never closed", n.Line)
		}
		if p.src[p.pos] == ')' {
			p.pos++
			return n, nil
		}
		c, err := p.datum()
		if err != nil {
			return n, err
		}
		n.List = append(n.List, c)
	}
}

// escapes are the backslash sequences a profile string may hold.
var escapes = map[byte]byte{'\\': '\\', '"': '"', 'n': '\n', 't': '\t', 'r': '\r'}

func (p *parser) str(regex bool) (Node, error) {
	n := Node{Line: p.line, IsStr: true, Regex: regex}
	p.pos++ // opening quote
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		switch c {
		case '"':
			n.Str = b.String()
			return n, p.delimited()
		case '\n':
			return n, fmt.Errorf("line %d: newline inside a string", n.Line)
		case '\\':
			if p.pos >= len(p.src) {
				break
			}
			d, ok := escapes[p.src[p.pos]]
			if !ok {
				return n, p.errorf("bad escape \\%c in a string", p.src[p.pos])
			}
			b.WriteByte(d)
			p.pos++
		default:
			b.WriteByte(c)
		}
	}
	return n, fmt.Errorf("line %d: string never closed", n.Line)
}

func (p *parser) atom() (Node, error) {
	start := p.pos
	for p.pos < len(p.src) && !strings.ContainsRune(" \t\r\n();\"", rune(p.src[p.pos])) {
		p.pos++
	}
	n := Node{Line: p.line, Atom: p.src[start:p.pos]}
	return n, p.delimited()
}

// delimited checks that a string or atom is not glued to the next datum.
func (p *parser) delimited() error {
	if p.pos < len(p.src) && !strings.ContainsRune(" \t\r\n();", rune(p.src[p.pos])) {
		return p.errorf("no space after a string or atom")
	}
	return nil
}
