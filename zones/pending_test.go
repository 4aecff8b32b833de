package zones

import (
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/changeset"
)

func TestPendingLookup(t *testing.T) {
	p := &Pending{changes: map[string]changeset.Change{}}
	for _, ch := range []changeset.Change{
		{Path: "new.txt", Status: changeset.Added, Type: changeset.File},
		{Path: "gone", Status: changeset.Deleted, OldType: changeset.Dir},
		{Path: "fresh", Status: changeset.Added, Type: changeset.Dir},
		{Path: "fresh/in.txt", Status: changeset.Added, Type: changeset.File},
		{Path: "opaque", Status: changeset.Replaced, Type: changeset.Dir, OldType: changeset.Dir},
		{Path: "perm", Status: changeset.Modified, Type: changeset.Dir},
		{Path: "perm/x.txt", Status: changeset.Modified, Type: changeset.File},
		{Path: "link", Status: changeset.Added, Type: changeset.Symlink, Target: "fresh"},
	} {
		p.changes[ch.Path] = ch
	}
	for _, tt := range []struct {
		rel    string
		change string // path of the change found
		host   bool
		link   string
		rest   string
		err    error
	}{
		{rel: ".", host: true},
		{rel: "old.txt", host: true},
		{rel: "dir/old.txt", host: true},
		{rel: "new.txt", change: "new.txt"},
		{rel: "new.txt/x", err: syscall.ENOTDIR},
		{rel: "gone", err: fs.ErrNotExist},
		{rel: "gone/below", err: fs.ErrNotExist},
		{rel: "fresh/in.txt", change: "fresh/in.txt"},
		{rel: "fresh/other", err: fs.ErrNotExist},
		{rel: "opaque", change: "opaque"},
		{rel: "opaque/old", err: fs.ErrNotExist},
		{rel: "perm/y.txt", host: true},
		{rel: "perm/x.txt", change: "perm/x.txt"},
		{rel: "link", link: "link"},
		{rel: "link/in.txt", link: "link", rest: "in.txt"},
	} {
		t.Run(tt.rel, func(t *testing.T) {
			l, err := p.Lookup(tt.rel)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.host, l.Host())
			if tt.change != "" {
				require.NotNil(t, l.Change)
				assert.Equal(t, tt.change, l.Change.Path)
			}
			if tt.link != "" {
				require.NotNil(t, l.Link)
				assert.Equal(t, tt.link, l.Link.Path)
				assert.Equal(t, tt.rest, l.Rest)
			}
		})
	}
	assert.True(t, p.Waits("fresh"), "beneath")
	assert.True(t, p.Waits("fresh/in.txt"), "at")
	assert.True(t, p.Waits("gone/new.txt"), "above")
	assert.False(t, p.Waits("other.txt"))
	assert.False(t, p.Waits("fres"))
	assert.Len(t, p.Children("."), 6)
	assert.Len(t, p.Children("fresh"), 1)
}

// A fifo put where a waiting file was listed does not hang the reader.
func TestPendingReadFileFifo(t *testing.T) {
	upper := t.TempDir()
	require.NoError(t, syscall.Mkfifo(upper+"/f", 0o644))
	require.NoError(t, os.WriteFile(upper+"/a.txt", []byte("abcdef"), 0o644))
	p := &Pending{upper: upper}
	_, err := p.ReadFile("f", 10)
	require.ErrorContains(t, err, "not a regular file")
	b, err := p.ReadFile("a.txt", 3)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b))
	_, err = p.ReadFile("../escape", 3)
	require.Error(t, err)
}
