package flock

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Holders never overlap: each checks that it is alone.
func TestLockExcludes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	var mu sync.Mutex
	inside, worst := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				unlock, err := Lock(p)
				require.NoError(t, err)
				mu.Lock()
				inside++
				worst = max(worst, inside)
				mu.Unlock()
				mu.Lock()
				inside--
				mu.Unlock()
				unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, worst)
}

func TestLockDirectory(t *testing.T) {
	unlock, err := Lock(t.TempDir())
	require.NoError(t, err)
	unlock()
}

func TestTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	unlock, err := Lock(p)
	require.NoError(t, err)
	_, ok, err := TryLock(p)
	require.NoError(t, err)
	assert.False(t, ok, "held elsewhere")
	unlock()
	unlock2, ok, err := TryLock(p)
	require.NoError(t, err)
	assert.True(t, ok, "free again")
	unlock2()
}
