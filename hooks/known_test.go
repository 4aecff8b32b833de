package hooks

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScanKnown(t *testing.T) {
	// A value of no known shape, and a placeholder shaped like a GitHub
	// token: the first is a leak in every form, the second never.
	k := Known{Name: "API_KEY", Value: "q7Zr/kL9+mW2xP4vN8tB1cY6", Placeholder: "ghp_" + strings.Repeat("aB3dE5gH7j", 3) + "K1M3N5"}
	require.NotEmpty(t, Scan([]byte(k.Placeholder)), "the placeholder looks like a token to Scan")
	require.Empty(t, Scan([]byte(k.Value)), "the value has no known shape")

	assert.Empty(t, ScanKnown([]byte("Authorization: Bearer "+k.Placeholder+"\n"), []Known{k}))
	for name, data := range map[string]string{
		"plain":     "token=" + k.Value,
		"url":       "q=" + url.QueryEscape(k.Value),
		"hex":       hex.EncodeToString([]byte("x" + k.Value)),
		"base64":    base64.StdEncoding.EncodeToString([]byte("pre" + k.Value + "post")),
		"base64 +1": base64.StdEncoding.EncodeToString([]byte("p" + k.Value)),
		"base64url": base64.RawURLEncoding.EncodeToString([]byte("pr" + k.Value)),
	} {
		found := ScanKnown([]byte("line one\n"+data+"\n"), []Known{k})
		require.Len(t, found, 1, name)
		assert.Equal(t, PatternKnown, found[0].Pattern, name)
		assert.Equal(t, 2, found[0].Line, name)
		assert.NotContains(t, found[0].String(), k.Value, name)
		assert.Contains(t, found[0].Redacted, "API_KEY", name)
	}
	out, found := RedactKnown([]byte("ok\nkey "+k.Value+"\nplaceholder "+k.Placeholder+"\n"), []Known{k})
	require.Len(t, found, 1)
	assert.NotContains(t, string(out), k.Value)
	assert.Contains(t, string(out), k.Placeholder)
	d := LeakGuard{Known: []Known{k}}.AfterToolResult("shell", []byte(k.Value))
	assert.Equal(t, Terminate, d.Action)
}
