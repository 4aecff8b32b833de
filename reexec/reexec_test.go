package reexec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegisterRejectsBadNames(t *testing.T) {
	for _, name := range []string{"init", "_x", "__a/b", "__a b", ""} {
		assert.Panics(t, func() { Register(name, func([]string) int { return 0 }) }, name)
	}
}

func TestRegisterRejectsDuplicates(t *testing.T) {
	Register("__reexec-test-dup", func([]string) int { return 0 })
	assert.Panics(t, func() { Register("__reexec-test-dup", func([]string) int { return 1 }) })
}

func TestLookup(t *testing.T) {
	Register("__reexec-test-lookup", func(args []string) int { return len(args) })
	fn, ok := Lookup("__reexec-test-lookup")
	require.True(t, ok)
	assert.Equal(t, 2, fn([]string{"a", "b"}))
	_, ok = Lookup("__missing")
	assert.False(t, ok)
}
