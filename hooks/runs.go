package hooks

import "bytes"

// runKind describes the candidates of one encoding: maximal runs of its
// bytes, at least min long. Wrapped output (base64 prints 76 per line, xxd
// -p prints 60) is joined into one run so a secret cut across lines is
// still found: a line joins the next when it is as long as the run's first
// line, a multiple of unit (so decoding stays aligned), and the next line
// is no longer.
type runKind struct {
	class *[256]uint8 // 0 for bytes outside the encoding, else alphabet bits
	unit  int         // encoded bytes per whole group of decoded bytes
	bytes int         // decoded bytes per unit
	min   int
	pad   bool // '=' may close the run
}

// Alphabet bits of base64 bytes, to tell the two alphabets apart.
const (
	common  = 1 << iota // letters and digits
	stdOnly             // '+' and '/'
	urlOnly             // '-' and '_'
)

var (
	base64Run = runKind{class: &base64Class, unit: 4, bytes: 3, min: MinBase64, pad: true}
	hexRun    = runKind{class: &hexClass, unit: 2, bytes: 1, min: MinHex}

	base64Class = func() (t [256]uint8) {
		for c := range t {
			switch {
			case c == '+' || c == '/':
				t[c] = stdOnly
			case c == '-' || c == '_':
				t[c] = urlOnly
			case b64Value[c] != invalid:
				t[c] = common
			}
		}
		return t
	}()
	hexClass = func() (t [256]uint8) {
		for c := range t {
			if hexValue[c] != invalid {
				t[c] = common
			}
		}
		return t
	}()
)

// runs calls fn with the bounds of every candidate run in data and the
// alphabet bits of its bytes.
func runs(data []byte, k *runKind, fn func(start, end int, alphabets uint8)) {
	for i := 0; ; {
		start, end, ok := k.nextLong(data, i)
		if !ok {
			return
		}
		width := end - start
		for {
			next, ok := k.wrapped(data, end-width, end, width)
			if !ok {
				break
			}
			end = next
			for end < len(data) && k.class[data[end]] != 0 {
				end++
			}
			if end-next != width {
				break // the last line of the block
			}
		}
		if k.pad {
			for p := 0; p < 2 && end < len(data) && data[end] == '='; p++ {
				end++
			}
		}
		var bits uint8
		for _, c := range data[start:end] {
			bits |= k.class[c]
		}
		fn(start, end, bits)
		i = end
	}
}

// nextLong finds the first line segment at or after i that is at least
// k.min long. Only such a segment can start a candidate, which allows a
// skip search: when the byte k.min-1 ahead is outside the encoding, no
// long segment starts before it, and the search jumps past it. Inside
// random base64 this reads about one byte in ten when looking for hex.
// The caller guarantees that no segment starting before i runs into i.
func (k *runKind) nextLong(data []byte, i int) (start, end int, ok bool) {
	for i+k.min <= len(data) {
		probe := i + k.min - 1
		if k.class[data[probe]] == 0 {
			i = probe + 1
			continue
		}
		start = probe
		for start > i && k.class[data[start-1]] != 0 {
			start--
		}
		end = probe + 1
		for end < len(data) && k.class[data[end]] != 0 {
			end++
		}
		if end-start >= k.min {
			return start, end, true
		}
		i = end
	}
	return 0, 0, false
}

// wrapped reports whether the line data[seg:end] continues on the next
// line, and where that line starts.
func (k *runKind) wrapped(data []byte, seg, end, width int) (int, bool) {
	if n := end - seg; n != width || n < k.min || n%k.unit != 0 {
		return 0, false
	}
	j := end
	if j < len(data) && data[j] == '\r' {
		j++
	}
	if j+1 >= len(data) || data[j] != '\n' || k.class[data[j+1]] == 0 {
		return 0, false
	}
	next := j + 1
	for next < len(data) && k.class[data[next]] != 0 {
		next++
	}
	if next-(j+1) > width {
		return 0, false
	}
	// The next line must hold nothing else ("after: done" is no part of
	// the block above it).
	if next < len(data) && data[next] != '\n' && data[next] != '\r' && (!k.pad || data[next] != '=') {
		return 0, false
	}
	return j + 1, true
}

// lineStarts appends the decoded offsets at which the joined lines of src
// begin. A token may start there whatever the previous line decoded to.
// src holds encoded bytes and line breaks only (padding comes last), so the
// encoded bytes before a line are its index less the breaks before it.
func (k *runKind) lineStarts(dst []int, src []byte) []int {
	breaks := 0
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 || i+j+1 >= len(src) {
			return dst
		}
		nl := i + j
		if nl > 0 && src[nl-1] == '\r' {
			breaks++
		}
		dst = append(dst, (nl-breaks)/k.unit*k.bytes)
		breaks++
		i = nl + 1
	}
}
