package hooks

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"slices"
	"sync"
)

// Layers beyond percent-encoding, base64 and hex: compressed streams
// inside a decoded run, escapes, hex dumps and folded lines. Each is
// bounded: what it decodes is at most the input's size, except inflation,
// which the scan's budget caps.

// Inflation bounds: one stream inflates to at most maxInflate bytes, and
// all of a scan's streams together to maxInflateRatio times the input
// plus maxInflate, so a small gzip bomb costs what a large input does.
const (
	maxInflate      = 4 << 20
	maxInflateRatio = 8
)

// compressed inflates buf when it starts a gzip or zlib stream (which
// `gzip | base64` and a zlib blob in JSON give) and scans what it holds.
// Findings point at the encoded run, data[off:end].
func (s *scan) compressed(buf []byte, off, end int) {
	if len(buf) < 10 || s.budget <= 0 {
		return
	}
	var zr io.Reader
	switch {
	case buf[0] == 0x1f && buf[1] == 0x8b && buf[2] == 8:
		gz := gzipReaders.Get().(*gzip.Reader)
		defer gzipReaders.Put(gz)
		if gz.Reset(bytes.NewReader(buf)) != nil {
			return
		}
		zr = gz
	case buf[0]&0x0f == 8 && buf[0]>>4 <= 7 && (uint16(buf[0])<<8|uint16(buf[1]))%31 == 0 && buf[1]&0x20 == 0:
		r, err := zlib.NewReader(bytes.NewReader(buf))
		if err != nil {
			return
		}
		zr = r
	default:
		return
	}
	limit := min(s.budget, maxInflate)
	out := bytes.NewBuffer(s.inflated[:0])
	// A stream cut short or corrupt still yields what came before.
	n, _ := io.Copy(out, io.LimitReader(zr, int64(limit)))
	s.budget -= int(n)
	s.inflated = out.Bytes()
	s.matches = s.m.find(s.matches[:0], s.inflated, nil)
	for _, mt := range s.matches {
		s.add(mt, Gzip, off, end, s.inflated)
	}
}

var gzipReaders = sync.Pool{New: func() any { return new(gzip.Reader) }}

// escaped decodes each run that holds a \uXXXX, \UXXXXXXXX or \xXX
// escape, as JSON with ensure_ascii, JavaScript and Python print them.
// Runs are delimited as percent-encoded ones are; text without a
// backslash costs one IndexByte.
func (s *scan) escaped() {
	data, pos, done := s.data, 0, 0
	for {
		j := bytes.IndexByte(data[pos:], '\\')
		if j < 0 {
			return
		}
		i := pos + j
		if _, n := escapeAt(data, i); n == 0 {
			pos = i + 1
			continue
		}
		start, end := i, i
		for start > done && !escapeStop[data[start-1]] {
			start--
		}
		for end < len(data) && !escapeStop[data[end]] {
			end++
		}
		s.decoded(Escaped, start, data[start:end], nil)
		pos, done = end, end
	}
}

// escapeStop ends an escaped run: whitespace, quotes, angle brackets and
// control bytes, as for percent-encoded runs.
var escapeStop = urlStop

// piece is a part of the input that a joined buffer holds: joined bytes
// from at on came from the input at in. Verbatim pieces map byte for
// byte; the others (decoded hex) map to where the piece starts.
type piece struct {
	at, in, inEnd int
	verbatim      bool
	separator     bool // a line break between two words, in no input
}

// origin maps an offset in the joined buffer to the input.
func origin(pieces []piece, d int) int {
	lo, hi := 0, len(pieces)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if pieces[mid].at <= d {
			lo = mid
		} else {
			hi = mid
		}
	}
	p := pieces[lo]
	if p.verbatim {
		return min(p.in+d-p.at, p.inEnd)
	}
	return p.in
}

// originEnd maps the end of a match (exclusive) to the input: the end of
// the piece its last byte came from, or the byte after it.
func originEnd(pieces []piece, d int) int {
	if d == 0 {
		return origin(pieces, 0)
	}
	lo, hi := 0, len(pieces)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if pieces[mid].at <= d-1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	p := pieces[lo]
	if p.verbatim {
		return min(p.in+d-p.at, p.inEnd)
	}
	return p.inEnd
}

// crossesPiece reports whether joined[start:end] spans two pieces: a
// secret a single line holds is the other layers' to find.
func crossesPiece(pieces []piece, start, end int) bool {
	i, _ := slices.BinarySearchFunc(pieces, start+1, func(p piece, at int) int { return p.at - at })
	return i < len(pieces) && pieces[i].at < end && !pieces[i].separator
}

// sub scans s.joined, made of s.pieces, with the plain layer and, when
// encoded is set, the base64, base32 and hex layers, and adds what it finds that spans two
// pieces, as enc when found in plain text.
func (s *scan) sub(enc Encoding, encoded bool) {
	t := scratch.Get().(*scan)
	defer t.release()
	t.m, t.data, t.findings, t.budget = s.m, s.joined, t.findings[:0], s.budget
	t.plain()
	if encoded {
		t.encoded()
	}
	s.budget = t.budget
	for _, f := range t.findings {
		if !crossesPiece(s.pieces, f.Offset, f.end) {
			continue
		}
		if f.Encoding == Plain {
			f.Encoding = enc
		}
		f.Offset, f.end = origin(s.pieces, f.Offset), originEnd(s.pieces, f.end)
		if s.known[f.Offset] {
			continue // found on its line already; the next line only made it longer
		}
		s.findings = append(s.findings, f)
	}
}

// minFold is the narrowest width folded lines are joined at.
const minFold = 8

// foldLead is how far before a cut word the scan of a folded block
// looks: far enough for the name before a secret found by it
// (aws_secret_access_key = …).
const foldLead = 32

// minCut is the shortest cut word that can hold a secret.
const minCut = 20

// folded joins blocks of lines cut at one width, as `fold -w 20` or a
// terminal's hard wrap leaves a secret: lines of the same width w (at
// least minFold), then one no longer, each break between two bytes that
// are not blank. No secret holds a blank, so one cut by a break lies in
// the word the break cuts: only those words of minCut bytes or more (and
// foldLead bytes before) are joined and scanned, and only secrets that
// cross a break are new. Blocks of base64 that the encoded layer joins
// already are left to it. Every line is in at most one block, and every
// byte in at most two windows.
func (s *scan) folded() {
	data := s.data
	clear(s.known)
	for _, f := range s.findings {
		if s.known == nil {
			s.known = map[int]bool{}
		}
		s.known[f.Offset] = true
	}
	s.joined, s.pieces = s.joined[:0], s.pieces[:0]
	s.encodedJoined, s.encodedPieces = s.encodedJoined[:0], s.encodedPieces[:0]
	for pos := 0; pos < len(data); {
		e, next := lineEnd(data, pos)
		w := e - pos
		if w < minFold || next >= len(data) || blank(data[e-1]) {
			pos = next
			continue
		}
		s.lines = append(s.lines[:0], span{pos, e})
		b64 := allBase64(data[pos:e])
		last := next
		for next < len(data) && !blank(data[next]) {
			e2, n2 := lineEnd(data, next)
			if e2-next > w {
				break
			}
			s.lines = append(s.lines, span{next, e2})
			b64 = b64 && allBase64(data[next:e2])
			last = n2
			if e2-next < w || e2 == next || blank(data[e2-1]) {
				break
			}
			next = n2
		}
		if len(s.lines) >= 2 && !(b64 && w >= MinBase64 && w%4 == 0) {
			s.cutWords(len(s.lines) >= 3)
			s.flushFolded(foldBatch)
		}
		pos = last
	}
	s.flushFolded(0)
}

// foldBatch is how many bytes of cut words are scanned together: enough
// to spread the cost of a scan, few enough to bound the memory.
const foldBatch = 64 << 10

// flushFolded scans the cut words gathered so far once they are at least
// least bytes.
func (s *scan) flushFolded(least int) {
	if len(s.joined) > least {
		s.sub(Folded, false)
		s.joined, s.pieces = s.joined[:0], s.pieces[:0]
	}
	if len(s.encodedJoined) > least {
		s.joined, s.pieces, s.encodedJoined, s.encodedPieces = s.encodedJoined, s.encodedPieces, s.joined, s.pieces
		s.sub(Folded, true)
		s.joined, s.pieces, s.encodedJoined, s.encodedPieces = s.encodedJoined[:0], s.encodedPieces[:0], s.joined[:0], s.pieces[:0]
	}
}

// span is a part of the input, data[start:end].
type span struct{ start, end int }

// cutWords appends the words the breaks of the block in s.lines cut, each
// as one line of the lines' bytes without the breaks, to s.joined, or to
// s.encodedJoined when the block is to be decoded too.
func (s *scan) cutWords(decode bool) {
	data, lines := s.data, s.lines
	if decode {
		s.joined, s.pieces, s.encodedJoined, s.encodedPieces = s.encodedJoined, s.encodedPieces, s.joined, s.pieces
		defer func() {
			s.joined, s.pieces, s.encodedJoined, s.encodedPieces = s.encodedJoined, s.encodedPieces, s.joined, s.pieces
		}()
	}
	done := span{-1, -1} // the last word taken, as line index and offset
	for k := 1; k < len(lines); k++ {
		// The word runs back from the end of line k-1 and on from the
		// start of line k, over whole lines where it fills them.
		bl, bi := k-1, lines[k-1].end
		n := 0
		for {
			for bi > lines[bl].start && !blank(data[bi-1]) {
				bi--
				n++
			}
			if bi > lines[bl].start || bl == 0 || bl <= done.start {
				break
			}
			bl, bi = bl-1, lines[bl-1].end
		}
		if bl < done.start || bl == done.start && bi < done.end {
			continue // inside the word taken before
		}
		fl, fi := k, lines[k].start
		for {
			for fi < lines[fl].end && !blank(data[fi]) {
				fi++
				n++
			}
			if fi < lines[fl].end || fl == len(lines)-1 {
				break
			}
			fl, fi = fl+1, lines[fl+1].start
		}
		done = span{fl, fi}
		if n < minCut {
			continue
		}
		bi = max(lines[bl].start, bi-foldLead)
		s.pieces = append(s.pieces, piece{at: len(s.joined), in: bi, inEnd: bi, separator: true})
		s.joined = append(s.joined, '\n')
		for l := bl; l <= fl; l++ {
			from, to := lines[l].start, lines[l].end
			if l == bl {
				from = bi
			}
			if l == fl {
				to = fi
			}
			s.pieces = append(s.pieces, piece{at: len(s.joined), in: from, inEnd: to, verbatim: true})
			s.joined = append(s.joined, data[from:to]...)
		}
	}
}

// lineEnd returns the end of the line at pos, without its line break,
// and where the next line starts.
func lineEnd(data []byte, pos int) (end, next int) {
	j := bytes.IndexByte(data[pos:], '\n')
	if j < 0 {
		return len(data), len(data)
	}
	end, next = pos+j, pos+j+1
	if end > pos && data[end-1] == '\r' {
		end--
	}
	return end, next
}

func blank(c byte) bool { return c <= ' ' || c == 0x7f }

func allBase64(l []byte) bool {
	for _, c := range l {
		if b64Value[c] == invalid && c != '=' {
			return false
		}
	}
	return true
}

// dumps decodes hex dumps: consecutive lines that start (after an offset
// column, if any) with hex bytes separated by blanks, colons or commas,
// as xxd, hexdump -C, od -A x -t x1, openssl's aa:bb:cc or a C array of
// 0x.. bytes print them. The bytes of all such lines are joined and
// scanned; an ASCII column after them is text, which the other layers see.
func (s *scan) dumps() {
	data := s.data
	s.joined, s.pieces = s.joined[:0], s.pieces[:0]
	flush := func() {
		if len(s.joined) >= 16 {
			s.dumpFound()
		}
		s.joined, s.pieces = s.joined[:0], s.pieces[:0]
	}
	for pos := 0; pos < len(data); {
		e, next := lineEnd(data, pos)
		before := len(s.joined)
		var groups int
		s.joined, groups = dumpLine(s.joined, data[pos:e])
		// A dump's last line may hold fewer bytes.
		if groups < 4 && (groups == 0 || len(s.pieces) == 0) {
			s.joined = s.joined[:before]
			flush()
		} else {
			s.pieces = append(s.pieces, piece{at: before, in: pos, inEnd: e})
		}
		pos = next
	}
	flush()
}

// dumpFound scans the bytes of a dump; unlike folded lines, a secret on
// one line of it is new too.
func (s *scan) dumpFound() {
	s.matches = s.m.find(s.matches[:0], s.joined, nil)
	for _, mt := range s.matches {
		s.add(mt, HexDump, origin(s.pieces, mt.start), originEnd(s.pieces, mt.end), s.joined)
	}
	if len(s.pieces) > 0 {
		s.compressed(s.joined, s.pieces[0].in, s.pieces[len(s.pieces)-1].inEnd)
	}
}

// dumpLine appends the bytes of the hex groups that start line to dst,
// and returns how many groups it read. A group is 2, 4 or 8 hex digits,
// maybe after 0x; groups are separated by one or two blanks, a colon or
// a comma (and a blank). A first field followed by a colon and a blank,
// or of another width than the second, is an offset column and skipped.
func dumpLine(dst, line []byte) ([]byte, int) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '{' || line[i] == '[') {
		i++
	}
	f1, n1 := hexField(line, i)
	if n1 == 0 {
		return dst, 0
	}
	j := f1
	if j+1 < len(line) && line[j] == ':' && line[j+1] == ' ' {
		i = skipSep(line, j) // xxd: "00000000: 736b 2d61"
	} else if k := skipSep(line, j); k > j {
		if _, n2 := hexField(line, k); n2 != 0 && n2 != n1 {
			i = k // hexdump -C, od: "00000000  73 6b"
		}
	}
	groups, width := 0, 0
	var canon []byte
	for {
		end, n := hexField(line, i)
		if n == 0 || n%2 == 1 || n > 8 || width != 0 && n > width {
			return dst, groups
		}
		if width == 0 {
			width = n
		}
		// Groups are all as wide as the first; a narrower one ends the
		// line (xxd's last group of an odd count of bytes), and what
		// follows is the text column.
		closing := end < len(line) && (line[end] == '}' || line[end] == ']' || line[end] == ')') || n < width
		if end < len(line) && !isSep(line[end]) && !closing {
			return dst, groups
		}
		dst = decodeHex(dst, line[end-n:end])
		groups++
		if closing {
			return dst, groups
		}
		k := skipSep(line, end)
		if k == end || k-end > 3 {
			return dst, groups
		}
		// Separators are all alike, but for the double blank hexdump -C
		// puts in the middle; another (xxd's two blanks before its text
		// column) ends the bytes.
		sep := line[end:k]
		switch {
		case canon == nil:
			canon = sep
		case bytes.Equal(sep, canon) || width == 2 && string(sep) == "  " && string(canon) == " ":
		default:
			return dst, groups
		}
		i = k
	}
}

// hexField returns the end of the hex digits at line[i:] (after an
// optional 0x) and how many there are.
func hexField(line []byte, i int) (end, n int) {
	if i+1 < len(line) && line[i] == '0' && (line[i+1] == 'x' || line[i+1] == 'X') {
		i += 2
	}
	end = i
	// No group is wider than 8 digits: a longer run (a hash, a blob) is
	// read no further than 9.
	for end < len(line) && end-i < 9 && hexValue[line[end]] != invalid {
		end++
	}
	return end, end - i
}

func isSep(c byte) bool { return c == ' ' || c == '\t' || c == ':' || c == ',' }

// skipSep skips at most three separator bytes.
func skipSep(line []byte, i int) int {
	j := i
	for j < len(line) && j-i < 4 && isSep(line[j]) {
		j++
	}
	return j
}
