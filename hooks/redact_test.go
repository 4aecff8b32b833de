package hooks

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedact(t *testing.T) {
	for _, sc := range secretCases(7) {
		wrapped := base64.StdEncoding.EncodeToString([]byte("key=" + sc.secret))
		var lines []string
		for len(wrapped) > 60 {
			lines, wrapped = append(lines, wrapped[:60]), wrapped[60:]
		}
		lines = append(lines, wrapped)
		for form, s := range map[string]string{
			"plain":          sc.secret,
			"inline":         "token: " + sc.secret + " (expires soon)",
			"base64 wrapped": strings.Join(lines, "\n"),
		} {
			t.Run(sc.name+"/"+form, func(t *testing.T) {
				in := "before:\n" + s + "\nafter: done\n"
				out, found := Redact([]byte(in))
				require.NotEmpty(t, found)
				assert.Empty(t, Scan(out), "the redacted text holds no secret")
				assert.NotContains(t, string(out), sc.secret[4:min(24, len(sc.secret))])
				assert.Contains(t, string(out), "redacted")
				if !strings.Contains(string(out), "whole output") {
					assert.True(t, strings.HasPrefix(string(out), "before:\n"), "%q", out)
					assert.True(t, strings.HasSuffix(string(out), "\nafter: done\n"), "%q", out)
				}
			})
		}
	}
}

func TestRedactClean(t *testing.T) {
	in := []byte("nothing to see\n3f786850e387550fdab836ed7e6dc881de23001b\n")
	out, found := Redact(in)
	assert.Empty(t, found)
	assert.Equal(t, in, out)
}
