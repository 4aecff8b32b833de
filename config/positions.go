package config

import (
	"fmt"
	"slices"
	"strconv"
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

// index holds a document's entries in the order the walk meets them.
type index struct {
	entries []entry
	byPath  map[string]int // path → its first entry
	arrays  map[string]int // array-of-tables path → how many tables so far
	lines   []int          // offset at which each line starts
}

// buildIndex walks doc. It fails only on a syntax error, which the caller
// leaves to the decoder to report: its messages say more.
func buildIndex(doc []byte) (*index, error) {
	var p unstable.Parser
	p.Reset(doc)
	x := &index{byPath: map[string]int{}, arrays: map[string]int{}, lines: lineStarts(doc)}
	prefix := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			prefix = x.table(e)
		case unstable.ArrayTable:
			prefix = x.arrayTable(e)
		case unstable.KeyValue:
			x.keyval(prefix, e, 0)
		}
	}
	return x, p.Error()
}

// table records a [a.b] header and returns its path.
func (x *index) table(n *unstable.Node) string {
	parts := keyParts(n.Key())
	line, col := x.pos(parts[0])
	path := x.resolve(parts, line, col)
	x.add(path, line, col, "a table")
	return path
}

// arrayTable records an [[a.b]] header and returns its path with the new
// table's index.
func (x *index) arrayTable(n *unstable.Node) string {
	parts := keyParts(n.Key())
	line, col := x.pos(parts[0])
	base := join(x.resolve(parts[:len(parts)-1], line, col), string(parts[len(parts)-1].Data))
	count := x.arrays[base]
	x.arrays[base] = count + 1
	if count == 0 {
		x.add(base, line, col, "an array of tables")
	}
	path := fmt.Sprintf("%s[%d]", base, count)
	x.add(path, line, col, "a table")
	return path
}

// resolve turns a header's key parts into a path, stepping into the latest
// table of any array of tables on the way, as TOML does for
// [agents.sandbox]. It records the tables the header implies at the
// header's line and col.
func (x *index) resolve(parts []*unstable.Node, line, col int) string {
	path := ""
	for i, part := range parts {
		path = join(path, string(part.Data))
		if n, ok := x.arrays[path]; ok {
			path = fmt.Sprintf("%s[%d]", path, n-1)
		}
		if _, seen := x.byPath[path]; !seen && i < len(parts)-1 {
			x.add(path, line, col, "a table")
		}
	}
	return path
}

// maxDepth bounds how far into nested arrays and inline tables the index
// goes. The schema nests two deep; past that the first level already has
// the wrong kind, and recording a pathological document's every level would
// cost time and memory quadratic in its depth.
const maxDepth = 8

// keyval records a key = value line (or an inline table's member) under
// prefix, and the implicit tables of a dotted key. depth counts the arrays
// and inline tables around it.
func (x *index) keyval(prefix string, n *unstable.Node, depth int) {
	it := n.Key()
	path := prefix
	var line, col int
	for it.Next() {
		if _, seen := x.byPath[path]; path != prefix && !seen {
			x.add(path, line, col, "a table")
		}
		line, col = x.pos(it.Node())
		path = join(path, string(it.Node().Data))
	}
	x.value(path, line, col, n.Value(), depth)
}

// value records v at path and descends into arrays and inline tables.
func (x *index) value(path string, line, col int, v *unstable.Node, depth int) {
	x.add(path, line, col, kindName(v.Kind))
	if depth >= maxDepth {
		return
	}
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
			x.value(fmt.Sprintf("%s[%d]", path, i), l, c, el, depth+1)
			i++
		}
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			if it.Node().Kind == unstable.KeyValue {
				x.keyval(path, it.Node(), depth+1)
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

// pos returns where n starts, counting columns in bytes as the decoder
// does. The parser can say too, but by rescanning the document each time.
func (x *index) pos(n *unstable.Node) (line, col int) {
	off := int(n.Raw.Offset)
	i, found := slices.BinarySearch(x.lines, off)
	if !found {
		i--
	}
	return i + 1, off - x.lines[i] + 1
}

func lineStarts(doc []byte) []int {
	starts := []int{0}
	for i, c := range doc {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// at returns the entry that starts nearest before or at line:col, the
// deepest one (recorded last) among those starting at the same place: the
// key or element the decoder was working on when it stopped there.
func (x *index) at(line, col int) (entry, bool) {
	var found entry
	if x == nil {
		return found, false
	}
	ok := false
	for _, e := range x.entries {
		after := e.line > line || (e.line == line && e.col > col)
		if !after && (!ok || !before(e, found)) {
			found, ok = e, true
		}
	}
	return found, ok
}

func before(a, b entry) bool {
	return a.line < b.line || (a.line == b.line && a.col < b.col)
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

func keyParts(it unstable.Iterator) []*unstable.Node {
	var parts []*unstable.Node
	for it.Next() {
		parts = append(parts, it.Node())
	}
	return parts
}

// join appends key to prefix, quoted as TOML would need it.
func join(prefix, key string) string {
	if key == "" || strings.IndexFunc(key, func(c rune) bool { return c > 0x7f || !isBareKeyChar(byte(c)) }) >= 0 {
		key = strconv.Quote(key)
	}
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func isBareKeyChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// parent drops the last key or index of path. Quoted keys may confuse it;
// they only ever name unknown keys, for which it merely finds no line or
// suggestion.
func parent(path string) string {
	if i := strings.LastIndexByte(path, '['); i >= 0 && strings.HasSuffix(path, "]") {
		return path[:i]
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
