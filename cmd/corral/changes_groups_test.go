package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWarnUnmapped: unprivileged, a file of the user's in a supplementary
// group is named, with its group, before the command runs; as root, which
// maps every group, nothing is said.
func TestWarnUnmapped(t *testing.T) {
	ws, dir := pending(t)
	var other int
	if os.Geteuid() != 0 {
		groups, err := os.Getgroups()
		require.NoError(t, err)
		for _, g := range groups {
			if g != os.Getgid() {
				other = g
			}
		}
		if other == 0 {
			t.Skip("the user has no supplementary group (scripts/test-unprivileged.sh gives corral-test one)")
		}
	} else {
		other = 12345
	}
	g := filepath.Join(ws, "g")
	require.NoError(t, os.WriteFile(g, []byte("g\n"), 0o644))
	require.NoError(t, os.Chown(g, -1, other))
	var out strings.Builder
	warnUnmapped(&out, dir)
	if os.Geteuid() == 0 {
		assert.Empty(t, out.String())
		return // nothing more to check: root maps the group
	}
	assert.Contains(t, out.String(), "corral: cannot change "+g+
		" in the changeset: its group "+strconv.Itoa(other))
	assert.Contains(t, out.String(), "is not mapped in the sandbox\n")
	assert.NotContains(t, out.String(), "a.txt")
}
