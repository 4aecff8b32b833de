package pathtree

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWithin(t *testing.T) {
	cases := []struct {
		p, base string
		want    bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/b/c/d", "/a/b", true},
		{"/a/bc", "/a/b", false}, // a sibling sharing the prefix
		{"/a/b", "/a/b/c", false},
		{"/a", "/a/b", false},
		{"/", "/", true},
		{"/anything", "/", true},
		{"/a/b", "/", true},
		{"/", "/a", false},
		{"/a/b/../c", "/a/b", true}, // names only: clean paths first
		{"", "/a", false},
		{"/a", "", false},
		{"", "", false},
		{"", "/", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Within(c.p, c.base), "Within(%q, %q)", c.p, c.base)
	}
}
