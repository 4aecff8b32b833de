package environ

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSet(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		kv   string
		want []string
	}{
		{"empty", nil, "A=1", []string{"A=1"}},
		{"appended", []string{"B=2"}, "A=1", []string{"B=2", "A=1"}},
		{"replaced in place", []string{"A=0", "B=2"}, "A=1", []string{"A=1", "B=2"}},
		{"every duplicate goes", []string{"B=2", "A=0", "C=3", "A=9"}, "A=1", []string{"B=2", "A=1", "C=3"}},
		{"a bare name replaces", []string{"A", "B=2"}, "A=1", []string{"A=1", "B=2"}},
		{"set to a bare name", []string{"A=0"}, "A", []string{"A"}},
		{"empty value", []string{"A=0"}, "A=", []string{"A="}},
		{"prefix names are others", []string{"AB=0", "A_=1"}, "A=1", []string{"AB=0", "A_=1", "A=1"}},
		{"names are case-sensitive", []string{"path=/x"}, "PATH=/y", []string{"path=/x", "PATH=/y"}},
		{"value with =", []string{"A=0"}, "A=b=c", []string{"A=b=c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orig := append([]string(nil), c.env...)
			assert.Equal(t, c.want, Set(c.env, c.kv))
			assert.Equal(t, orig, c.env, "env itself is left alone")
		})
	}
}
