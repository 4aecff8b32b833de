package learn

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Render writes p as a new config file holding one agent, id, with
// comment lines first.
func Render(id string, p *Policy, comment []string) []byte {
	var b strings.Builder
	for _, c := range comment {
		for _, line := range strings.Split(c, "\n") {
			b.WriteString("# " + oneLine(line) + "\n")
		}
	}
	fmt.Fprintf(&b, "[[agents]]\nid = %s\n", Quote(id))
	out, _ := merge([]byte(b.String()), id, p, true)
	return out
}

// Merge adds p to agent id of the config file doc (created at its end
// when doc has none of that id), keeping the rest of doc as it is: each
// line it adds carries a "# learned" comment. An entry whose key doc
// already holds with that value is left out, and so are the settings the
// run was given (Entry.Given): they came from doc or the command line. The
// caller checks that the result parses.
func Merge(doc []byte, id string, p *Policy) ([]byte, error) { return merge(doc, id, p, false) }

func merge(doc []byte, id string, p *Policy, given bool) ([]byte, error) {
	s := scan(doc)
	first, end, ok := s.agent(doc, id)
	var edits []edit
	if !ok {
		tail := ""
		if len(doc) > 0 && doc[len(doc)-1] != '\n' {
			tail = "\n"
		}
		tail += fmt.Sprintf("\n[[agents]]\nid = %s\n", Quote(id))
		doc = append(doc, tail...)
		s = scan(doc)
		if first, end, ok = s.agent(doc, id); !ok {
			return nil, fmt.Errorf("cannot add agent %q", id)
		}
	}
	for _, table := range []string{"[agents.sandbox]", "[agents.sandbox.limits]"} {
		es := entriesOf(p, table, given)
		if len(es) == 0 {
			continue
		}
		h := s.find(first, end, table)
		edits = append(edits, s.tableEdits(doc, h, end, table, es)...)
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	out := slices.Clone(doc)
	for _, e := range edits {
		out = slices.Concat(out[:e.at], []byte(e.text), out[e.at+e.cut:])
	}
	return out, nil
}

// edit replaces cut bytes at offset at with text.
type edit struct {
	at, cut int
	text    string
}

// entriesOf are p's entries that go in table, in order, keyed by the key
// as it is written there.
func entriesOf(p *Policy, table string, given bool) []Entry {
	var out []Entry
	for _, e := range p.Entries {
		if e.Given && !given {
			continue
		}
		limit := strings.HasPrefix(e.Key, "limits.")
		if limit == (table == "[agents.sandbox.limits]") {
			e.Key = strings.TrimPrefix(e.Key, "limits.")
			out = append(out, e)
		}
	}
	return out
}

// agent returns the headers of agent id's section: its [[agents]] header
// and the index past its last header; ok false when there is none. An
// empty id takes the only agent.
func (s *scanned) agent(doc []byte, id string) (first, end int, ok bool) {
	var starts []int
	for i, h := range s.headers {
		if h.name == "[[agents]]" {
			starts = append(starts, i)
		}
	}
	for _, i := range starts {
		stop := i + 1
		for stop < len(s.headers) && inAgent(s.headers[stop].name) {
			stop++
		}
		if id == "" && len(starts) == 1 || s.idOf(i) == id {
			return i, stop, true
		}
	}
	return 0, 0, false
}

func inAgent(name string) bool {
	return strings.HasPrefix(name, "[agents.") || strings.HasPrefix(name, "[[agents.")
}

// idOf is the id key of the table of header h.
func (s *scanned) idOf(h int) string {
	for _, kv := range s.keys {
		if kv.table == h && kv.key == "id" {
			if v, err := strconv.Unquote(kv.value); err == nil {
				return v
			}
			return strings.Trim(kv.value, `'`)
		}
	}
	return ""
}

// find returns the index of header name among [first, end), or -1.
func (s *scanned) find(first, end int, name string) int {
	for i := first; i < end; i++ {
		if s.headers[i].name == name {
			return i
		}
	}
	return -1
}

// tableEdits adds es to the table of header h (-1: none yet, made at the
// end of the agent's section, which ends before header end).
func (s *scanned) tableEdits(doc []byte, h, end int, table string, es []Entry) []edit {
	var keys []string
	for _, e := range es {
		if !slices.Contains(keys, e.Key) {
			keys = append(keys, e.Key)
		}
	}
	var edits []edit
	var fresh strings.Builder
	for _, k := range keys {
		var mine []Entry
		for _, e := range es {
			if e.Key == k {
				mine = append(mine, e)
			}
		}
		kv := s.key(h, k)
		switch {
		case kv == nil:
			fresh.WriteString(newKey(k, mine))
		case mine[0].IsList():
			edits = append(edits, listEdit(doc, kv, mine)...)
		default:
			if e, ok := scalarEdit(kv, mine[0]); ok {
				edits = append(edits, e)
			}
		}
	}
	if fresh.Len() == 0 {
		return edits
	}
	if h >= 0 {
		return append(edits, edit{at: s.headers[h].end, text: fresh.String()})
	}
	at := len(doc)
	if end < len(s.headers) {
		at = s.headers[end].start
	}
	text := "\n" + table + "\n" + fresh.String()
	if at > 0 && doc[at-1] != '\n' {
		text = "\n" + text
	}
	if at < len(doc) {
		text += "\n"
	}
	return append(edits, edit{at: at, text: text})
}

// key returns the key k of the table of header h, or nil.
func (s *scanned) key(h int, k string) *keyval {
	if h < 0 {
		return nil
	}
	for i := range s.keys {
		if s.keys[i].table == h && s.keys[i].key == k {
			return &s.keys[i]
		}
	}
	return nil
}

// newKey writes key k with its entries.
func newKey(k string, es []Entry) string {
	if !es[0].IsList() {
		return scalarLine(k, es[0])
	}
	var b strings.Builder
	b.WriteString(k + " = [\n")
	for _, e := range es {
		b.WriteString(elementLine(e))
	}
	b.WriteString("]\n")
	return b.String()
}

// listEdit adds es to the list kv, leaving out values it holds: after
// the last element (given a comma when it has none), on lines of their
// own before the closing bracket, so that a comment after the last
// element stays on its line.
func listEdit(doc []byte, kv *keyval, es []Entry) []edit {
	if kv.close < 0 || kv.lastAt < 0 {
		return nil
	}
	held := string(doc[kv.start:kv.end])
	var b strings.Builder
	for _, e := range es {
		if e.Weakens == "" && strings.Contains(held, e.Value) {
			continue
		}
		b.WriteString(elementLine(e))
	}
	if b.Len() == 0 {
		return nil
	}
	comma := ""
	if kv.last != ',' && kv.last != '[' {
		comma = ","
	}
	between := string(doc[kv.lastAt+1 : kv.close])
	if i := strings.LastIndexByte(between, '\n'); i >= 0 {
		return []edit{{at: kv.lastAt + 1, text: comma}, {at: kv.lastAt + 1 + i + 1, text: b.String()}}
	}
	return []edit{{at: kv.close, text: comma + "\n" + b.String()}}
}

// scalarEdit sets kv to e's value, keeping the old value in a comment; a
// weakening entry is added as a comment line below it.
func scalarEdit(kv *keyval, e Entry) (edit, bool) {
	if kv.value == e.Value {
		return edit{}, false
	}
	if e.Weakens != "" {
		return edit{at: kv.end, text: scalarLine(kv.key, e)}, true
	}
	e.Why += "; was " + kv.value
	return edit{at: kv.start, cut: kv.end - kv.start, text: scalarLine(kv.key, e)}, true
}

func scalarLine(k string, e Entry) string {
	e.Why, e.Weakens, e.Warning = oneLine(e.Why), oneLine(e.Weakens), oneLine(e.Warning)
	if e.Weakens != "" {
		return fmt.Sprintf("# %s = %s # learned, left out: %s (%s)\n", k, e.Value, e.Weakens, e.Why)
	}
	if e.Given {
		return fmt.Sprintf("%s = %s # given\n", k, e.Value)
	}
	return fmt.Sprintf("%s = %s # learned: %s%s\n", k, e.Value, e.Why, warning(e))
}

func elementLine(e Entry) string {
	e.Why, e.Weakens, e.Warning = oneLine(e.Why), oneLine(e.Weakens), oneLine(e.Warning)
	if e.Weakens != "" {
		return fmt.Sprintf("  # %s, # learned, left out: %s (%s)\n", e.Value, e.Weakens, e.Why)
	}
	if e.Given {
		return fmt.Sprintf("  %s, # given\n", e.Value)
	}
	return fmt.Sprintf("  %s, # learned: %s%s\n", e.Value, e.Why, warning(e))
}

func warning(e Entry) string {
	if e.Warning == "" {
		return ""
	}
	return ". Warning: " + e.Warning
}
