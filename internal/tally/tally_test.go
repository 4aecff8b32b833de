package tally

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRepeatsMerge(t *testing.T) {
	l := New[string, string](3)
	isNew, kept := l.Add("a", "first", 1)
	assert.True(t, isNew)
	assert.True(t, kept)
	isNew, kept = l.Add("a", "second", 2)
	assert.False(t, isNew)
	assert.True(t, kept)
	require.Len(t, l.Items(), 1)
	assert.Equal(t, Item[string]{Value: "first", Count: 3}, l.Items()[0])
}

func TestBounded(t *testing.T) {
	l := New[string, int](10)
	for i := range 100000 {
		k := fmt.Sprint(i)
		if _, kept := l.Add(k, i, 1); !kept {
			l.Overflow("more", -1, 1)
		}
	}
	items := l.Items()
	require.Len(t, items, 11)
	assert.Equal(t, 0, items[0].Value, "the first seen come first")
	assert.Equal(t, Item[int]{Value: -1, Count: 100000 - 10}, items[10])
	// A key already kept still counts once the log is full.
	_, kept := l.Add("3", 3, 5)
	assert.True(t, kept)
	assert.Equal(t, 6, l.Items()[3].Count)
}
