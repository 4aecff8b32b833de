package hooks

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
)

// Encoding names the layer a secret was found in.
type Encoding string

// Encodings, as reported in [Finding].Encoding.
const (
	Plain     Encoding = "plain"
	URL       Encoding = "url"       // percent-encoding, sk%2Dant%2D…
	Base64    Encoding = "base64"    // standard alphabet, padded or not
	Base64URL Encoding = "base64url" // URL-safe alphabet, padded or not
	Hex       Encoding = "hex"
	Base32    Encoding = "base32"   // RFC 4648, as `base32` prints it
	Escaped   Encoding = "escape"   // \uXXXX, \UXXXXXXXX and \xXX escapes
	HexDump   Encoding = "hex dump" // hex bytes with separators: xxd, hexdump -C, od -t x1, aa:bb:cc
	Folded    Encoding = "folded"   // cut into lines of one width, as fold prints it
	Gzip      Encoding = "gzip"     // a gzip or zlib stream inside base64, base32, hex or a dump
)

// Minimum lengths of encoded candidates. Shorter runs could not hold a
// whole secret once decoded, and skipping them keeps the common short
// words and numbers of log text out of the decoders.
const (
	MinBase64 = 24
	MinHex    = 40
	MinBase32 = 32
)

// Finding is one secret found in the input. It never holds the secret:
// Redacted keeps its first four bytes and its length.
type Finding struct {
	Pattern  string   // which kind of secret, e.g. [PatternAnthropic]
	Encoding Encoding // the layer it was found in
	Offset   int      // byte offset in the input where the secret or its encoded form starts
	Line     int      // 1-based line of Offset
	Length   int      // length of the decoded secret
	Redacted string   // e.g. "sk-a…(108 chars)"

	end int // where the secret or its encoded form ends in the input
}

func (f Finding) String() string {
	return fmt.Sprintf("line %d offset %d: %s (%s) %s", f.Line, f.Offset, f.Pattern, f.Encoding, f.Redacted)
}

// redact shows only what identifies the kind of secret, never enough to
// use or guess it: every pattern needs far more than four bytes.
func redact(secret []byte) string {
	return fmt.Sprintf("%s…(%d chars)", secret[:min(4, len(secret))], len(secret))
}

// Scan returns the secrets in data, plain or encoded, ordered by offset.
// It is safe for concurrent use and linear in len(data).
func Scan(data []byte) []Finding {
	s := scratch.Get().(*scan)
	defer s.release()
	s.m, s.data, s.findings = loadMatcher(), data, nil
	s.budget = maxInflateRatio*len(data) + maxInflate
	s.plain()
	s.urlEncoded()
	s.escaped()
	s.dumps()
	s.encoded()
	s.folded()
	return s.result()
}

// encoded scans the base64, base32 and hex runs. Hex digits and base32
// bytes are base64 bytes too, so they are looked for only inside base64
// runs: one pass over the input serves all three.
func (s *scan) encoded() {
	runs(s.data, &base64Run, s.base64)
}

// scratch keeps the buffers of finished scans: an agent scans every tool
// call and result, and decoding would otherwise allocate each time.
var scratch = sync.Pool{New: func() any { return new(scan) }}

// maxPooled bounds the decode buffer kept for reuse, so one huge scan does
// not pin its memory.
const maxPooled = 4 << 20

func (s *scan) release() {
	if cap(s.buf) > maxPooled {
		s.buf = nil
	}
	if cap(s.inflated) > maxPooled {
		s.inflated = nil
	}
	s.data, s.findings, s.m = nil, nil, nil
	scratch.Put(s)
}

// scan is the state of one Scan call.
type scan struct {
	m        *matcher
	data     []byte
	buf      []byte // decoded bytes of the current candidate, reused
	starts   []int  // its line starts, reused
	matches  []match
	findings []Finding

	// budget is how many bytes compressed streams may still inflate to.
	budget   int
	inflated []byte
	joined   []byte  // lines joined by folded or dumps, reused
	pieces   []piece // where the joined bytes came from
	known    map[int]bool
	lines    []span // the lines of a folded block

	encodedJoined []byte // words of folded blocks to decode too
	encodedPieces []piece
}

func (s *scan) plain() {
	s.matches = s.m.find(s.matches[:0], s.data, nil)
	for _, mt := range s.matches {
		s.add(mt, Plain, mt.start, mt.end, s.data)
	}
}

// decoded scans one decoded candidate src, which starts at off in the
// input. starts lists decoded offsets where a token may begin regardless
// of the byte before.
func (s *scan) decoded(enc Encoding, off int, src []byte, starts []int) {
	switch enc {
	case URL:
		s.buf = decodeURL(s.buf[:0], src)
	case Hex:
		s.buf = decodeHex(s.buf[:0], src)
	case Base32:
		s.buf = decodeBase32(s.buf[:0], src)
	case Escaped:
		s.buf = decodeEscapes(s.buf[:0], src)
	default:
		s.buf = decodeBase64(s.buf[:0], src)
	}
	s.matches = s.m.find(s.matches[:0], s.buf, starts)
	c := cursor{src: src}
	for _, mt := range s.matches {
		var at, end int
		switch enc {
		case URL:
			at, end = c.url(mt.start), c.url(mt.end)
		case Hex:
			at, end = c.hex(mt.start), c.hex(mt.end)
		case Base32:
			at, end = c.base32(mt.start), c.base32(mt.end)
		case Escaped:
			at, end = c.escape(mt.start), c.escape(mt.end)
		default:
			at, end = c.base64(mt.start), c.base64(mt.end)
		}
		s.add(mt, enc, off+at, off+max(end, at+1), s.buf)
	}
	if enc != URL && enc != Escaped {
		s.compressed(s.buf, off, off+len(src))
	}
}

// add records a match in buf whose encoded form is data[off:end].
func (s *scan) add(mt match, enc Encoding, off, end int, buf []byte) {
	s.findings = append(s.findings, Finding{
		Pattern:  mt.p.name,
		Encoding: enc,
		Offset:   off,
		Length:   mt.end - mt.start,
		Redacted: redact(buf[mt.start:mt.end]),
		end:      end,
	})
}

// urlEncoded decodes each whitespace-delimited run that holds a valid %XX
// escape. Only those runs are decoded, so text without '%' costs one
// IndexByte.
func (s *scan) urlEncoded() {
	data, pos, done := s.data, 0, 0
	for {
		j := bytes.IndexByte(data[pos:], '%')
		if j < 0 {
			return
		}
		i := pos + j
		if _, ok := urlEscape(data, i); !ok {
			pos = i + 1
			continue
		}
		start, end := i, i
		for start > done && !urlStop[data[start-1]] {
			start--
		}
		for end < len(data) && !urlStop[data[end]] {
			end++
		}
		s.decoded(URL, start, data[start:end], nil)
		pos, done = end, end
	}
}

// urlStop ends a URL-encoded run: whitespace, quotes, angle brackets and
// control bytes.
var urlStop = func() [256]bool {
	t := byteSet(" \"'<>`\x7f")
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	return t
}()

func (s *scan) base64(start, end int, alphabets uint8) {
	src := s.data[start:end]
	if end-start >= MinHex {
		runs(src, &hexRun, func(hs, he int, _ uint8) { s.hex(start+hs, start+he) })
	}
	enc := Base64
	switch {
	case alphabets&stdOnly != 0 && alphabets&urlOnly != 0:
		return // no encoder mixes the alphabets; this is a path or a name
	case alphabets&urlOnly != 0:
		enc = Base64URL
	}
	s.starts = base64Run.lineStarts(s.starts[:0], src)
	s.decoded(enc, start, src, s.starts)
	if end-start >= MinBase32 && isBase32(src) {
		s.decoded(Base32, start, src, nil)
	}
}

// isBase32 reports whether a base64 run holds only base32 bytes, line
// breaks and padding: upper case letters and the digits 2 to 7, which
// random base64 or text of any length does not.
func isBase32(src []byte) bool {
	for _, c := range src {
		if b32Value[c] == invalid && c != '\n' && c != '\r' && c != '=' {
			return false
		}
	}
	return true
}

func (s *scan) hex(start, end int) {
	src := s.data[start:end]
	s.starts = hexRun.lineStarts(s.starts[:0], src)
	s.decoded(Hex, start, src, s.starts)
	if digits(src)%2 == 1 {
		// An odd run is an even encoding glued to one stray hex letter;
		// which end it is on is unknown, so try the other alignment too.
		s.starts = hexRun.lineStarts(s.starts[:0], src[1:])
		s.decoded(Hex, start+1, src[1:], s.starts)
	}
}

// digits counts the hex digits in src, which may hold line breaks.
func digits(src []byte) int {
	n := 0
	for _, c := range src {
		if hexValue[c] != invalid {
			n++
		}
	}
	return n
}

// result orders the findings, drops repeats and numbers the lines.
func (s *scan) result() []Finding {
	f := s.findings
	slices.SortStableFunc(f, func(a, b Finding) int { return a.Offset - b.Offset })
	f = dedupe(f)
	line, from := 1, 0
	for i := range f {
		line += bytes.Count(s.data[from:f[i].Offset], []byte{'\n'})
		from = f[i].Offset
		f[i].Line = line
	}
	return f
}

// dedupe keeps one finding per offset and pattern. A URL-encoded run also
// holds the plain text around its escapes, so both layers can report the
// same secret: the longer match wins, and on a tie the earlier layer
// (plain) does. f is sorted by offset, stably in layer order.
func dedupe(f []Finding) []Finding {
	out := f[:0]
	for _, x := range f {
		n := len(out)
		if n > 0 && out[n-1].Offset == x.Offset && out[n-1].Pattern == x.Pattern {
			if x.Length > out[n-1].Length {
				out[n-1] = x
			}
			continue
		}
		out = append(out, x)
	}
	return out
}
