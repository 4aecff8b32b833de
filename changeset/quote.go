package changeset

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Names and file contents come from the sandboxed command, and a reviewer
// reads them on a terminal. A newline in a name would start a line of the
// command's choosing; an escape sequence would erase or rewrite what is
// shown. Quote and VisibleLine make both harmless.

// Quote returns name as it is safe to print: unchanged when every
// character in it is printable and valid UTF-8 and it holds no double
// quote or backslash; otherwise in double quotes, with C escapes (\n, \t,
// \", \\ ...) and every other such byte as a three-digit octal escape, as
// git prints names with core.quotePath. A quoted name is always one line.
func Quote(name string) string {
	if !needsQuote(name) {
		return name
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\%03o`, name[i])
		case r < utf8.RuneSelf && cEscape(byte(r)) != "":
			b.WriteString(cEscape(byte(r)))
		case !unicode.IsPrint(r) || r < ' ':
			for _, c := range []byte(name[i : i+n]) {
				fmt.Fprintf(&b, `\%03o`, c)
			}
		default:
			b.WriteString(name[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

func needsQuote(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r == '"' || r == '\\' || !unicode.IsPrint(r) {
			return true
		}
		i += n
	}
	return false
}

// cEscape is the C escape of an ASCII byte that has one, or "".
func cEscape(c byte) string {
	switch c {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\v':
		return `\v`
	case '\f':
		return `\f`
	case '\r':
		return `\r`
	case '"':
		return `\"`
	case '\\':
		return `\\`
	}
	return ""
}

// VisibleLine returns one line of a file as it is safe to print: tabs and
// printable characters as they are, other control characters in caret
// notation as cat -v writes them (ESC as ^[, CR as ^M, DEL as ^?), other
// characters that are not printable (C1 controls, bidirectional overrides,
// zero-width marks) as \u escapes and bytes that are not UTF-8 as \x
// escapes. A line without any of these is returned unchanged.
func VisibleLine(line string) string {
	if !needsVisible(line) {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRuneInString(line[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, line[i])
		case r == '\t':
			b.WriteByte('\t')
		case r < ' ':
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f:
			b.WriteString("^?")
		case !unicode.IsPrint(r) && r != ' ':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(line[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsVisible(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r != '\t' && !unicode.IsPrint(r) {
			return true
		}
		i += n
	}
	return false
}

// printable reports whether a run of text holds only what VisibleLine
// leaves unchanged, line ends (LF, CRLF) aside. last says whether b ends
// the file: otherwise a rune or CRLF cut by the end of b is left for the
// next call, and rest is where it starts.
func printable(b []byte, last bool) (ok bool, rest int) {
	for i := 0; i < len(b); {
		if !last && (!utf8.FullRune(b[i:]) || b[i] == '\r' && i+1 == len(b)) {
			return true, i
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == '\n', r == '\t':
		case r == '\r':
			if i+1 >= len(b) || b[i+1] != '\n' {
				return false, len(b)
			}
		case r == utf8.RuneError && n <= 1, !unicode.IsPrint(r):
			return false, len(b)
		}
		i += n
	}
	return true, len(b)
}
