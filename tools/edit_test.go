package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReplaceUnique(t *testing.T) {
	got, err := ReplaceUnique("a := 1\nb := 2\n", "b := 2", "b := 3")
	require.NoError(t, err)
	assert.Equal(t, "a := 1\nb := 3\n", got)

	var me *MatchError
	_, err = ReplaceUnique("x x", "y", "z")
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 0, me.Matches)
	assert.Contains(t, err.Error(), "not found")

	_, err = ReplaceUnique("x x", "x", "z")
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 2, me.Matches)
	assert.Contains(t, err.Error(), "occurs 2 times")

	var ae *ArgError
	_, err = ReplaceUnique("x", "", "z")
	require.ErrorAs(t, err, &ae)
}

func TestCaptureExported(t *testing.T) {
	c := NewCapture(8)
	_, _ = c.Write([]byte("0123456789abcdef"))
	assert.Equal(t, "0123"+truncationMarker(8)+"cdef", c.String())
}
