package hooks

import (
	"bytes"
	"slices"
)

// match is one secret in a buffer: data[start:end].
type match struct {
	p          *compiled
	start, end int
}

// find appends every secret in data to dst, which must be empty, in order
// and without overlaps: where two matches overlap the earlier one wins, and
// at the same start the pattern listed first. starts, sorted, lists offsets
// where a token may begin whatever precedes it.
func (m *matcher) find(dst []match, data []byte, starts []int) []match {
	dst = m.dispatch(dst, data, starts)
	n := len(dst)
	for _, c := range m.anchored {
		dst = c.findAnchored(dst, data, starts)
	}
	if len(dst) == n {
		return dst
	}
	slices.SortStableFunc(dst, func(a, b match) int { return a.start - b.start })
	out, end := dst[:0], 0
	for _, mt := range dst {
		if mt.start >= end {
			out = append(out, mt)
			end = mt.end
		}
	}
	return out
}

// dispatch scans data left to right, trying the patterns that start with
// each byte. After a match it resumes at the match's end.
func (m *matcher) dispatch(dst []match, data []byte, starts []int) []match {
	next := 0 // where the search resumes after a match
	for i, b := range data {
		kind := m.first[b]
		if kind == 0 || i < next {
			continue
		}
		for len(starts) > 0 && starts[0] < i {
			starts = starts[1:]
		}
		forced := len(starts) > 0 && starts[0] == i
		// Most candidate bytes sit inside a word; rule them out here,
		// before any call. The exact test (escapes) follows in try.
		if i > 0 && !forced && m.denied[kind][data[i-1]] && !maybeEscape(data, i) &&
			(i+1 >= len(data) || !m.glued[kind][data[i+1]] || !tokenRun(data, i, m.minGlued[kind])) {
			continue
		}
		for _, c := range m.byFirst[b] {
			if mt, ok := c.try(data, i, forced); ok {
				dst = append(dst, mt)
				next = mt.end
				break
			}
		}
	}
	return dst
}

// tokenRun reports whether at least n token bytes start at data[i].
func tokenRun(data []byte, i, n int) bool {
	if i+n > len(data) {
		return false
	}
	for _, c := range data[i : i+n] {
		if !tokenByte[c] {
			return false
		}
	}
	return true
}

// findAnchored finds the pattern by its anchor literal.
func (c *compiled) findAnchored(dst []match, data []byte, starts []int) []match {
	for pos := 0; pos < len(data); {
		j := bytes.Index(data[pos:], c.anchorBytes)
		if j < 0 {
			break
		}
		at := pos + j
		pos = at + 1
		i := c.back(data, at)
		if i < 0 {
			continue
		}
		_, forced := slices.BinarySearch(starts, i)
		if mt, ok := c.try(data, i, forced); ok {
			dst = append(dst, mt)
			pos = mt.end
		}
	}
	return dst
}

// maybeEscape reports whether data[i-1] could end a JSON escape such as
// \n or a %XX escape, which boundaryOK accepts as separators.
func maybeEscape(data []byte, i int) bool {
	return i >= 2 && data[i-2] == '\\' || i >= 3 && data[i-3] == '%'
}

// try matches the pattern at data[i].
func (c *compiled) try(data []byte, i int, forced bool) (match, bool) {
	if !bytes.HasPrefix(data[i:], c.prefixBytes) {
		return match{}, false
	}
	valid, glued := c.valid, false
	if !forced && !c.boundaryOK(data, i) {
		if c.glue == nil || inEscape(data, i) {
			return match{}, false
		}
		valid, glued = c.glue, true
		// A word such as "task-list" starts many glued candidates;
		// rule them out before the regexp: every body that may be
		// glued starts with a run of token bytes.
		n, j := 0, i+len(c.prefix)
		for ; j < len(data) && n < c.glueRun && tokenByte[data[j]]; j++ {
			n++
		}
		if n < c.glueRun || !shortWordBefore(data, i) {
			return match{}, false
		}
	}
	w := data[i:min(len(data), i+c.window)]
	if c.pre != nil && !c.pre(w) {
		return match{}, false
	}
	loc := c.re.FindIndex(w)
	if loc == nil {
		return match{}, false
	}
	if valid != nil && !valid(w[len(c.prefix):loc[1]]) {
		return match{}, false
	}
	end := i + loc[1]
	if c.closed && end < len(data) && c.tail[data[end]] {
		return match{}, false
	}
	if glued && !gluedEnd(data, i, end) {
		return match{}, false
	}
	if c.extend != nil {
		end = c.extend(data, end)
	}
	return match{p: c, start: i, end: end}, true
}

// maxGlue is the longest word a token may be glued to. Inside a line of
// random base64url every byte is a token byte, so a prefix met there by
// chance has a long word before it.
const maxGlue = 16

// shortWordBefore reports whether at most maxGlue letters, digits, '_' and
// '-' come right before data[i].
func shortWordBefore(data []byte, i int) bool {
	for j := i - 1; j >= 0 && j >= i-maxGlue-1; j-- {
		if !tokenByte[data[j]] {
			return true
		}
	}
	return i <= maxGlue
}

// gluedEnd reports whether a match glued to the bytes before it ends the
// run it sits in: what follows is no letter, digit or base64 punctuation,
// or is the '/' that closes a path segment the match's '/' opened.
func gluedEnd(data []byte, start, end int) bool {
	if end == len(data) || !tokenDeny[data[end]] {
		return true
	}
	return data[end] == '/' && data[start-1] == '/'
}

// boundaryOK reports whether a token may start at data[i]: the byte before
// it must not be in the pattern's deny set, except for the letter of a
// JSON escape such as \n, which separates like whitespace does. Nothing
// starts inside a %XX escape: "%201234…" is a space and "1234…", which the
// URL layer finds.
func (c *compiled) boundaryOK(data []byte, i int) bool {
	if c.deny == nil || i == 0 {
		return true
	}
	prev := data[i-1]
	if inEscape(data, i) {
		return false
	}
	if !c.deny[prev] {
		return true
	}
	if i >= 3 && data[i-3] == '%' {
		if _, ok := urlEscape(data, i-3); ok {
			return true // "%20sk-…": the escape separates
		}
	}
	return i >= 2 && data[i-2] == '\\' && (prev == 'n' || prev == 'r' || prev == 't')
}

// inEscape reports whether data[i] is a hex digit of a %XX escape.
func inEscape(data []byte, i int) bool {
	if data[i-1] == '%' {
		_, ok := urlEscape(data, i-1)
		return ok
	}
	if i >= 2 && data[i-2] == '%' {
		_, ok := urlEscape(data, i-2)
		return ok
	}
	return false
}
