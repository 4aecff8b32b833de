package learn

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Quote writes s as a TOML basic string. Paths and names come from what
// the command did: a control character must not end a comment or a string
// early, and invalid UTF-8 (which TOML does not allow) becomes U+FFFD.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, string(utf8.RuneError)) {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// oneLine is s as it may stand in a comment: control characters (a
// newline would end the comment and start a key) shown as '?', invalid
// UTF-8 as U+FFFD.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}
