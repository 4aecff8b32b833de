package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

func TestDelegate(t *testing.T) {
	sandboxtest.Require(t, corral.Config{})
	var log bytes.Buffer
	d, err := delegate(context.Background(), &log)
	require.NoError(t, err, log.String())

	assert.Equal(t, []string{"data"}, d.ChildSees, "the child has only what it declared")
	assert.Equal(t, []string{
		"write /data/summary.md: ok",
		"write /data/cleanup.sh: write /data/cleanup.sh: permission denied: the change was not approved",
		"delete /data/raw.csv: remove /data/raw.csv: operation not permitted",
		"read /reports/q3.md: read /reports/q3.md: does not exist",
	}, d.FileResults)
	assert.Equal(t, "notes.md\nsummary.md\ntable.csv\n", d.ChildShell, "the command sees its own writes")
	var applied, refused, blocked []string
	for _, r := range d.Reviewed.Applied {
		applied = append(applied, r.Path)
	}
	for _, r := range d.Reviewed.Refused {
		refused = append(refused, r.Path)
	}
	for _, r := range d.Reviewed.Blocked {
		blocked = append(blocked, r.Path)
	}
	assert.Equal(t, []string{"/data/notes.md"}, applied)
	assert.Equal(t, []string{"/data/table.csv"}, refused)
	assert.Equal(t, []string{"/data/raw.csv"}, blocked)
	assert.Equal(t, map[string]string{"summary.md": "# Summary\n", "notes.md": "notes\n", "raw.csv": "x,y\n1,2\n"}, d.ZoneContents)
	assert.Equal(t, `child requests "rw" on input but parent has "ro"`, d.TooMuch)
	assert.Empty(t, d.PureSees)
	assert.Contains(t, log.String(), "approver: refused")
	assert.NotContains(t, strings.ToLower(strings.Join(d.FileResults, "")+d.ChildShell), "zone")
}
