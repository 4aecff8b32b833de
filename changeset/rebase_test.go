package changeset

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file another writer changed after the changeset began: once rebased,
// the changeset's own change to it applies; without Rebase (the control)
// it is a conflict. A root holding changes keeps its baseline.
func TestRebase(t *testing.T) {
	for _, rebase := range []bool{false, true} {
		t.Run(map[bool]string{false: "without", true: "with"}[rebase], func(t *testing.T) {
			f := newFixture(t, sampleLower)
			afterTick(t, f.lower)
			appendFile(t, filepath.Join(f.lower, "a.txt"), "other writer\n")
			if rebase {
				require.NoError(t, f.cs.Rebase())
			}
			f.write(t, "a.txt", "mine\n")
			_, err := f.cs.Apply(ApplyOptions{})
			if !rebase {
				var ce *ConflictError
				require.ErrorAs(t, err, &ce)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "mine\n", readTree(t, f.lower)["a.txt"])
		})
	}

	// Pending changes keep the baseline they were made against.
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", "mine\n")
	afterTick(t, f.lower)
	appendFile(t, filepath.Join(f.lower, "a.txt"), "other writer\n")
	require.NoError(t, f.cs.Rebase())
	_, err := f.cs.Apply(ApplyOptions{})
	var ce *ConflictError
	require.ErrorAs(t, err, &ce, "a root with changes is not rebased")

	unlock, err := f.cs.Lock()
	require.NoError(t, err)
	defer unlock()
	assert.ErrorIs(t, f.cs.Rebase(), ErrInUse)
}
