package learn

import "strings"

// The config file is edited as text, so that what the user wrote (order,
// comments, spacing) stays as it is: the scan finds the table headers and
// the keys with where their values end, and the edits are insertions at
// those places. The result is parsed again by the caller before it is
// used.

// header is a table header line: "[agents.sandbox]", "[[agents]]".
type header struct {
	name     string // without spaces
	start    int    // offset of the line
	end      int    // offset just past the line's newline
	keyStart int    // index of the first key after it
}

// keyval is a key = value at the top of a table.
type keyval struct {
	key    string
	table  int // index of its header, -1 for the root table
	start  int // offset of the line
	end    int // offset just past the newline ending the value
	value  string
	close  int // a list's closing bracket, or -1
	last   byte
	lastAt int // its last significant byte before close, and where
}

type scanned struct {
	headers []header
	keys    []keyval
}

// scan reads doc's structure. It does not validate: a document that
// parses is what it is given.
func scan(doc []byte) *scanned {
	s := &scanned{}
	i, n := 0, len(doc)
	for i < n {
		lineStart := i
		for i < n && (doc[i] == ' ' || doc[i] == '\t') {
			i++
		}
		switch {
		case i >= n:
		case doc[i] == '\n' || doc[i] == '\r':
			i = skipLine(doc, i)
		case doc[i] == '#':
			i = skipLine(doc, i)
		case doc[i] == '[':
			end := skipLine(doc, i)
			text := string(doc[i:end])
			if c := strings.IndexByte(text, '#'); c >= 0 {
				text = text[:c]
			}
			s.headers = append(s.headers, header{name: strings.Join(strings.Fields(text), ""), start: lineStart, end: end, keyStart: len(s.keys)})
			i = end
		default:
			i = s.keyval(doc, lineStart, i)
		}
	}
	return s
}

func skipLine(doc []byte, i int) int {
	for i < len(doc) && doc[i] != '\n' {
		i++
	}
	if i < len(doc) {
		i++
	}
	return i
}

// keyval reads a key = value starting at i and returns the offset past it.
func (s *scanned) keyval(doc []byte, lineStart, i int) int {
	eq := i
	for eq < len(doc) && doc[eq] != '=' && doc[eq] != '\n' {
		eq++
	}
	kv := keyval{key: strings.Trim(strings.TrimSpace(string(doc[i:eq])), `"'`), table: len(s.headers) - 1, start: lineStart, close: -1}
	if eq >= len(doc) || doc[eq] != '=' {
		kv.end = skipLine(doc, i)
		return kv.end
	}
	j, depth := eq+1, 0
	valueStart := j
	var last byte
	lastAt := -1
	for j < len(doc) {
		c := doc[j]
		switch {
		case c == '"' || c == '\'':
			j = skipString(doc, j)
			last, lastAt = doc[j-1], j-1
			continue
		case c == '#':
			for j < len(doc) && doc[j] != '\n' {
				j++
			}
			continue
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth == 0 && c == ']' {
				kv.close, kv.last, kv.lastAt = j, last, lastAt
			}
		case c == '\n' && depth <= 0:
			kv.value = strings.TrimSpace(stripComment(string(doc[valueStart:j])))
			kv.end = j + 1
			s.keys = append(s.keys, kv)
			return kv.end
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			last, lastAt = c, j
		}
		j++
	}
	kv.value = strings.TrimSpace(stripComment(string(doc[valueStart:])))
	kv.end = len(doc)
	s.keys = append(s.keys, kv)
	return kv.end
}

// skipString returns the offset past the string starting at i.
func skipString(doc []byte, i int) int {
	q := doc[i]
	if i+2 < len(doc) && doc[i+1] == q && doc[i+2] == q {
		end := strings.Index(string(doc[i+3:]), strings.Repeat(string(q), 3))
		if end < 0 {
			return len(doc)
		}
		j := i + 3 + end + 3
		for j < len(doc) && doc[j] == q { // """a"""" ends with the last three
			j++
		}
		return j
	}
	j := i + 1
	for j < len(doc) && doc[j] != q && doc[j] != '\n' {
		if q == '"' && doc[j] == '\\' {
			j++
		}
		j++
	}
	return min(j+1, len(doc))
}

// stripComment drops a trailing comment from a one-line value.
func stripComment(v string) string {
	in := byte(0)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case in != 0 && c == '\\' && in == '"':
			i++
		case in != 0 && c == in:
			in = 0
		case in == 0 && (c == '"' || c == '\''):
			in = c
		case in == 0 && c == '#':
			return v[:i]
		}
	}
	return v
}
