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

func TestRel(t *testing.T) {
	cases := []struct {
		base, p, want string
		ok            bool
	}{
		{"/a/b", "/a/b", ".", true},
		{"/a/b", "/a/b/c/d", "c/d", true},
		{"/", "/x/y", "x/y", true},
		{"/", "/", ".", true},
		{"/a/b", "/a/bc", "", false},
		{"/a/b", "/a", "", false},
	}
	for _, c := range cases {
		got, ok := Rel(c.base, c.p)
		assert.Equal(t, c.ok, ok, "%s in %s", c.p, c.base)
		assert.Equal(t, c.want, got, "%s in %s", c.p, c.base)
	}
}
