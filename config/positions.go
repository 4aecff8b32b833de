package config

import (
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// The decoder reports where it stopped but names keys without array indices
// ("agents.sandbox.mode" for every agent), and the resolved values carry no
// positions at all. A position index, built from the document's syntax tree,
// supplies both: the full path of whatever sits at a line and column, and the
// line of any path.

// entry is one place in the document: a key, a table header or an array
// element.
type entry struct {
	path      string // with indices: "agents[1].sandbox.writable_paths[0]"
	line, col int    // 1-based
	kind      string // what the value is, as prose: "a string", "a table"
}

// index holds a document's entries in document order.
type index struct {
	entries []entry
	byPath  map[string]int // path → its first entry
	arrays  map[string]int // array-of-tables path → how many tables so far
	p       *unstable.Parser
}

// buildIndex walks doc. It fails only on a syntax error, which the decoder
// has already reported with its position.
func buildIndex(doc []byte) (*index, error) {
	var p unstable.Parser
	p.Reset(doc)
	x := &index{byPath: map[string]int{}, arrays: map[string]int{}, p: &p}
	prefix := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			prefix = x.table(e)
		case unstable.ArrayTable:
			prefix = x.arrayTable(e)
		case unstable.KeyValue:
			x.keyval(prefix, e)
		}
	}
	x.p = nil
	return x, p.Error()
}

// table records a [a.b] header and returns its path.
func (x *index) table(n *unstable.Node) string {
	parts, first := keyParts(n.Key())
	path := x.resolve("", parts)
	line, col := x.pos(first)
	x.add(path, line, col, "a table")
	return path
}

// arrayTable records an [[a.b]] header and returns its path with the new
// table's index.
func (x *index) arrayTable(n *unstable.Node) string {
	parts, first := keyParts(n.Key())
	base := join(x.resolve("", parts[:len(parts)-1]), parts[len(parts)-1])
	count := x.arrays[base]
	x.arrays[base] = count + 1
	line, col := x.pos(first)
	x.add(base, line, col, "an array of tables")
	path := fmt.Sprintf("%s[%d]", base, count)
	x.add(path, line, col, "a table")
	return path
}

// resolve appends parts to prefix, stepping into the latest table of any
// array of tables on the way, as TOML does for [agents.sandbox].
func (x *index) resolve(prefix string, parts []string) string {
	path := prefix
	for _, part := range parts {
		path = join(path, part)
		if n, ok := x.arrays[path]; ok {
			path = fmt.Sprintf("%s[%d]", path, n-1)
		}
	}
	return path
}

// keyval records a key = value line (or an inline table's member) under
// prefix, and the implicit tables of a dotted key.
func (x *index) keyval(prefix string, n *unstable.Node) {
	it := n.Key()
	path := prefix
	var line, col int
	for it.Next() {
		if path != prefix {
			x.add(path, line, col, "a table")
		}
		line, col = x.pos(it.Node())
		path = join(path, string(it.Node().Data))
	}
	x.value(path, line, col, n.Value())
}

// value records v at path and descends into arrays and inline tables.
func (x *index) value(path string, line, col int, v *unstable.Node) {
	x.add(path, line, col, kindName(v.Kind))
	switch v.Kind {
	case unstable.Array:
		i := 0
		for it := v.Children(); it.Next(); {
			el := it.Node()
			if el.Kind == unstable.Comment {
				continue
			}
			l, c := line, col
			if el.Raw.Length > 0 {
				l, c = x.pos(el)
			}
			x.value(fmt.Sprintf("%s[%d]", path, i), l, c, el)
			i++
		}
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			if it.Node().Kind == unstable.KeyValue {
				x.keyval(path, it.Node())
			}
		}
	}
}

func (x *index) add(path string, line, col int, kind string) {
	if _, ok := x.byPath[path]; !ok {
		x.byPath[path] = len(x.entries)
	}
	x.entries = append(x.entries, entry{path: path, line: line, col: col, kind: kind})
}

func (x *index) pos(n *unstable.Node) (line, col int) {
	start := x.p.Shape(n.Raw).Start
	return start.Line, start.Column
}

// at returns the last entry that starts at or before line:col: the key or
// element the decoder was working on when it stopped there.
func (x *index) at(line, col int) (entry, bool) {
	var found entry
	if x == nil {
		return found, false
	}
	ok := false
	for _, e := range x.entries {
		if e.line > line || (e.line == line && e.col > col) {
			break
		}
		found, ok = e, true
	}
	return found, ok
}

// line returns the line of path, or of its nearest recorded parent when the
// path itself is absent (a required key that is missing), or 0.
func (x *index) line(path string) int {
	for path != "" {
		if i, ok := x.byPath[path]; ok {
			return x.entries[i].line
		}
		path = parent(path)
	}
	return 0
}

// kind returns what the document holds at path, or "".
func (x *index) kind(path string) string {
	if i, ok := x.byPath[path]; ok {
		return x.entries[i].kind
	}
	return ""
}

func keyParts(it unstable.Iterator) (parts []string, first *unstable.Node) {
	for it.Next() {
		if first == nil {
			first = it.Node()
		}
		parts = append(parts, string(it.Node().Data))
	}
	return parts, first
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// parent drops the last key or index of path.
func parent(path string) string {
	if strings.HasSuffix(path, "]") {
		return path[:strings.LastIndexByte(path, '[')]
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

func kindName(k unstable.Kind) string {
	switch k {
	case unstable.String:
		return "a string"
	case unstable.Bool:
		return "a boolean"
	case unstable.Integer:
		return "an integer"
	case unstable.Float:
		return "a float"
	case unstable.Array:
		return "an array"
	case unstable.InlineTable:
		return "a table"
	case unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime, unstable.DateTime:
		return "a date or time"
	}
	return "a value"
}
