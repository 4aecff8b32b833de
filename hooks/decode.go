package hooks

// Lenient decoders for the encoded layers. They never fail: a leak scanner
// wants whatever bytes an encoding yields, so invalid input is skipped or
// copied rather than rejected. Each appends to dst, which lets one scratch
// buffer serve a whole scan.

import "unicode/utf8"

const invalid = 0xff

// b64Value maps both base64 alphabets (standard and URL-safe) to 6-bit
// values; every other byte is invalid.
var b64Value = func() (t [256]byte) {
	for i := range t {
		t[i] = invalid
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(std); i++ {
		t[std[i]] = byte(i)
	}
	t['-'], t['_'] = 62, 63
	return t
}()

// hexValue maps hex digits of either case to their value.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = invalid
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return t
}()

// decodeBase64 decodes src in either alphabet, padded or not. It skips line
// breaks (wrapped output such as `base64` prints), stops at the first '='
// and drops a final lone 6-bit group, which encodes no whole byte.
func decodeBase64(dst, src []byte) []byte {
	var acc uint32
	n := 0
	for _, c := range src {
		if c == '\n' || c == '\r' {
			continue
		}
		v := b64Value[c]
		if v == invalid {
			if c == '=' {
				break
			}
			continue
		}
		acc = acc<<6 | uint32(v)
		n++
		if n == 4 {
			dst = append(dst, byte(acc>>16), byte(acc>>8), byte(acc))
			acc, n = 0, 0
		}
	}
	switch n {
	case 2:
		dst = append(dst, byte(acc>>4))
	case 3:
		dst = append(dst, byte(acc>>10), byte(acc>>2))
	}
	return dst
}

// decodeHex decodes pairs of hex digits, skipping line breaks between
// them. A trailing odd digit and any other byte are dropped.
func decodeHex(dst, src []byte) []byte {
	hi := -1
	for _, c := range src {
		v := hexValue[c]
		if v == invalid {
			continue
		}
		if hi < 0 {
			hi = int(v)
			continue
		}
		dst = append(dst, byte(hi<<4)|v)
		hi = -1
	}
	return dst
}

// decodeURL replaces %XX escapes with their byte and copies everything
// else, including a '%' that starts no valid escape. '+' stays '+': in
// secrets it is data, not a space.
func decodeURL(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		if c, ok := urlEscape(src, i); ok {
			dst = append(dst, c)
			i += 2
			continue
		}
		dst = append(dst, src[i])
	}
	return dst
}

// urlEscape decodes the escape at src[i] when there is a valid one.
func urlEscape(src []byte, i int) (byte, bool) {
	if src[i] != '%' || i+2 >= len(src) {
		return 0, false
	}
	hi, lo := hexValue[src[i+1]], hexValue[src[i+2]]
	if hi == invalid || lo == invalid {
		return 0, false
	}
	return hi<<4 | lo, true
}

// cursor maps decoded indexes back to the index in src of the encoded byte
// where each starts, so a finding points into the input. Findings come in
// increasing order, so the cursor only moves forward and mapping every
// finding of a candidate costs one walk over it.
type cursor struct {
	src   []byte
	pos   int // index in src
	count int // encoded units (valid bytes, or decoded bytes for URL) before pos
}

func (c *cursor) base64(d int) int { return c.nthValid(&b64Value, d/3*4+d%3) }

func (c *cursor) hex(d int) int { return c.nthValid(&hexValue, 2*d) }

// nthValid returns the index of the k-th byte of src that table accepts;
// k must not be below the previous call's.
func (c *cursor) nthValid(table *[256]byte, k int) int {
	for ; c.pos < len(c.src); c.pos++ {
		if table[c.src[c.pos]] == invalid {
			continue
		}
		if c.count == k {
			return c.pos
		}
		c.count++
	}
	return len(c.src)
}

func (c *cursor) url(d int) int {
	for ; c.pos < len(c.src) && c.count < d; c.pos++ {
		if _, ok := urlEscape(c.src, c.pos); ok {
			c.pos += 2
		}
		c.count++
	}
	return c.pos
}

// b32Value maps the base32 alphabet (RFC 4648, upper case, as `base32`
// prints it) to 5-bit values.
var b32Value = func() (t [256]byte) {
	for i := range t {
		t[i] = invalid
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = byte(i)
	}
	return t
}()

// decodeBase32 decodes src, skipping line breaks, up to the first '='.
// Bits that make no whole byte at the end are dropped.
func decodeBase32(dst, src []byte) []byte {
	var acc uint32
	bits := 0
	for _, c := range src {
		v := b32Value[c]
		if v == invalid {
			if c == '=' {
				break
			}
			continue
		}
		acc = acc<<5 | uint32(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			dst = append(dst, byte(acc>>bits))
		}
	}
	return dst
}

// decodeEscapes replaces \uXXXX (JSON, JavaScript, Python), \UXXXXXXXX
// and \xXX escapes with what they stand for, UTF-8 encoded, and copies
// everything else.
func decodeEscapes(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		if r, n := escapeAt(src, i); n > 0 {
			dst = appendEscaped(dst, r, n)
			i += n - 1
			continue
		}
		dst = append(dst, src[i])
	}
	return dst
}

// appendEscaped appends what an escape of length n stands for: a \xXX
// escape (n is 4) one byte, the others a rune.
func appendEscaped(dst []byte, r rune, n int) []byte {
	if n == 4 {
		return append(dst, byte(r))
	}
	return utf8.AppendRune(dst, r)
}

// escapeAt decodes the escape at src[i]: the rune (or byte) it stands for
// and the escape's length, or 0.
func escapeAt(src []byte, i int) (rune, int) {
	if src[i] != '\\' || i+1 >= len(src) {
		return 0, 0
	}
	digits := 0
	switch src[i+1] {
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	default:
		return 0, 0
	}
	if i+2+digits > len(src) {
		return 0, 0
	}
	var r rune
	for _, c := range src[i+2 : i+2+digits] {
		v := hexValue[c]
		if v == invalid {
			return 0, 0
		}
		r = r<<4 | rune(v)
	}
	if r > utf8.MaxRune {
		return 0, 0
	}
	return r, 2 + digits
}

func (c *cursor) base32(d int) int { return c.nthValid(&b32Value, d*8/5) }

func (c *cursor) escape(d int) int {
	for ; c.pos < len(c.src) && c.count < d; c.pos++ {
		r, n := escapeAt(c.src, c.pos)
		if n > 0 {
			c.pos += n - 1
			c.count += len(appendEscaped(nil, r, n))
			continue
		}
		c.count++
	}
	return c.pos
}
