package agent

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

var slugForm = regexp.MustCompile(`^[a-z0-9_][a-z0-9._-]{0,31}-[0-9a-f]{8}$`)

func TestSlug(t *testing.T) {
	keys := []string{
		"coder/main", "coder/Main", "agent:coder", "shared", "", ".", "..", "../../etc/passwd",
		"/", "a\x00b", "ümlaut/ß", strings.Repeat("x", 200), strings.Repeat("x", 200) + "y",
		".hidden", "-dash", "a b", "a/b", "a_b",
	}
	seen := map[string]string{}
	for _, k := range keys {
		s := Slug(k)
		assert.Regexp(t, slugForm, s, "key %q", k)
		assert.NotContains(t, s, "/")
		assert.NotContains(t, s, "..")
		assert.Equal(t, s, Slug(k), "stable")
		if prev, dup := seen[s]; dup {
			t.Errorf("keys %q and %q share the slug %s", prev, k, s)
		}
		seen[s] = k
	}
	assert.True(t, strings.HasPrefix(Slug("coder/main"), "coder-main-"), "readable: %s", Slug("coder/main"))
}
