//go:build linux && cgo && libseccomp

package seccomp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompileIsDeterministic(t *testing.T) {
	a, err := Compile(Policy(Options{}))
	require.NoError(t, err)
	b, err := Compile(Policy(Options{}))
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Zero(t, len(a)%instructionSize)
	c, err := Compile(Policy(Options{AllowUnixSockets: true}))
	require.NoError(t, err)
	assert.NotEqual(t, a, c)
}
