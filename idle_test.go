package corral

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveIdleTimeout(t *testing.T) {
	for _, tc := range []struct {
		in, want time.Duration
	}{
		{0, 30 * time.Second},
		{-1, 0},
		{time.Minute, time.Minute},
	} {
		s, err := Config{Workspace: t.TempDir(), IdleTimeout: tc.in}.resolve()
		require.NoError(t, err)
		assert.Equal(t, tc.want, s.IdleTimeout, "IdleTimeout %v", tc.in)
	}
}
