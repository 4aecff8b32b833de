package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// slugKeep is how many characters of a scope key a slug keeps.
const slugKeep = 32

// Slug turns a scope key into a name safe as one path component: the key's
// letters, digits, '.', '_' and '-' (lower-cased, anything else as '-', at
// most 32 of them, no leading dot) followed by '-' and 8 hex digits of the
// key's SHA-256, so that keys differing only in what was dropped or
// replaced still get different names. It is never empty, ".", "..", nor
// holds a '/'.
func Slug(key string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(key) {
		if b.Len() >= slugKeep {
			break
		}
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
			b.WriteRune(c)
		case c == '.' && b.Len() > 0:
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	sum := sha256.Sum256([]byte(key))
	safe := strings.Trim(b.String(), "-.")
	if safe == "" {
		safe = "scope"
	}
	return safe + "-" + hex.EncodeToString(sum[:4])
}
