package sbplcheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const good = `(version 1)
(deny default)
; a comment with ( and " in it
(allow file-read*)
(allow file-write* (subpath (param "WORKSPACE"))) ; trailing comment
(allow file-write-data (regex #"^/dev/ttys[0-9]+$") (literal "/dev/null"))
(deny file-read* (literal "a \"quoted\" \\ path"))
`

func TestCheckAcceptsWellFormedProfile(t *testing.T) {
	require.NoError(t, Check(good, []string{"WORKSPACE"}))
	forms, err := Parse(good)
	require.NoError(t, err)
	assert.Contains(t, Strings(forms), `a "quoted" \ path`)
	refs, err := ParamRefs(forms)
	require.NoError(t, err)
	assert.Equal(t, []string{"WORKSPACE"}, refs)
}

func TestCheckRejects(t *testing.T) {
	const head = "(version 1)\n(deny default)\n"
	tests := []struct {
		name, src string
		params    []string
		want      string
	}{
		{"unclosed form", head + "(allow file-read*", nil, "never closed"},
		{"stray close", head + "(allow file-read*))", nil, "unexpected )"},
		{"unterminated string", head + `(allow file-read* (literal "/a))`, nil, "string never closed"},
		{"bad escape", head + `(allow file-read* (literal "/a\q"))`, nil, `bad escape \q`},
		{"newline in string", head + "(allow file-read* (literal \"/a\n\"))", nil, "newline inside a string"},
		{"glued string", head + `(allow file-read* (literal "/a""/b"))`, nil, "no space after"},
		{"undefined param", head + `(allow file-read* (subpath (param "A")))`, nil, "A referenced but not defined"},
		{"unused param", head + `(allow file-read*)`, []string{"A"}, "A defined but never referenced"},
		{"duplicate param", head + `(allow file-read* (subpath (param "A")))`, []string{"A", "A"}, "defined twice"},
		{"param not a string", head + `(allow file-read* (subpath (param A)))`, nil, `want (param "NAME")`},
		{"param with two args", head + `(allow file-read* (subpath (param "A" "B")))`, nil, `want (param "NAME")`},
		{"lower-case param", head + `(allow file-read* (subpath (param "a")))`, []string{"a"}, `want (param "NAME")`},
		{"no operation", head + `(allow (literal "/a"))`, nil, "without an operation"},
		{"string as operation", head + `(allow "file-read*")`, nil, "not an operation"},
		{"operation after filter", head + `(allow file-read* (literal "/a") file-write*)`, nil, "not an operation"},
		{"unknown form", head + `(define x 1)`, nil, "want (allow ...)"},
		{"missing version", "(deny default)\n(allow file-read*)", nil, "must start with"},
		{"allow default", "(version 1)\n(allow default)", nil, "must start with"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.src, tt.params)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
