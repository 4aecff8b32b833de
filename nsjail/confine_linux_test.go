package nsjail

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/landlock"
	"github.com/corralhq/corral/mounts"
)

func entryMap(es []landlock.Entry) map[string]landlock.Access {
	m := map[string]landlock.Access{}
	for _, e := range es {
		m[e.Path] = e.Access
	}
	return m
}

var paths = mounts.Input{
	Writable:  []string{"/home/me/proj", "/home/me/cache"},
	ReadOnly:  []string{"/home/me/proj/data"},
	Hidden:    []string{"/home/me/.ssh"},
	Protected: []string{".git"},
}

func TestLandlockEntriesNamespaced(t *testing.T) {
	got := entryMap(landlockEntries(&setup{Paths: paths}, nil))
	assert.Equal(t, map[string]landlock.Access{
		"/":              landlock.ReadOnly,
		"/home/me/proj":  landlock.ReadWrite,
		"/home/me/cache": landlock.ReadWrite,
		"/tmp":           landlock.ReadWrite,
		"/dev/shm":       landlock.ReadWrite,
		"/dev/null":      landlock.Device,
		"/dev/zero":      landlock.Device,
		"/dev/full":      landlock.Device,
		"/dev/tty":       landlock.Terminal,
		"/dev/pts":       landlock.Terminal,
	}, got, "the mount tree enforces read-only and hidden paths: nothing to carve")
}

func TestLandlockEntriesBare(t *testing.T) {
	s := &setup{Paths: paths, Bare: true, TmpDir: "/tmp/corral-123"}
	got := entryMap(landlockEntries(s, nil))
	assert.Equal(t, map[string]landlock.Access{
		"/":                   landlock.ReadOnly,
		"/home/me/proj":       landlock.ReadWrite,
		"/home/me/cache":      landlock.ReadWrite,
		"/tmp/corral-123":     landlock.ReadWrite,
		"/home/me/proj/data":  landlock.ReadOnly,
		"/home/me/proj/.git":  landlock.ReadOnly,
		"/home/me/cache/.git": landlock.ReadOnly,
		"/home/me/.ssh":       landlock.None,
		"/dev/null":           landlock.Device,
		"/dev/zero":           landlock.Device,
		"/dev/full":           landlock.Device,
		"/dev/tty":            landlock.Terminal,
	}, got, "no host /tmp, /dev/shm or /dev/pts")
}

func TestStdioEntries(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	file, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer file.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	es := stdioEntries([]*os.File{null, file, w})
	require.Len(t, es, 2, "pipes need no rule")
	assert.Equal(t, landlock.Terminal, es[0].Access)
	assert.Equal(t, landlock.Device, es[1].Access)
	assert.Regexp(t, `^/proc/self/fd/\d+$`, es[0].Path)
}

func TestParseParent(t *testing.T) {
	cases := []struct {
		stat string
		ppid int
		ok   bool
	}{
		{"42 (sh) S 7 42 42 0 -1", 7, true},
		{"43 (a) b) (c) R 9 43", 9, true},
		{"garbage", 0, false},
		{"44 (x)", 0, false},
	}
	for _, c := range cases {
		ppid, ok := parseParent(c.stat)
		assert.Equal(t, c.ok, ok, c.stat)
		assert.Equal(t, c.ppid, ppid, c.stat)
	}
}

func TestDescendants(t *testing.T) {
	parents := map[int]int{2: 1, 3: 2, 4: 3, 5: 1, 10: 9, 11: 10}
	assert.ElementsMatch(t, []int{2, 3, 4, 5}, descendants(1, parents))
	assert.Empty(t, descendants(4, parents))
}

func TestSetEnv(t *testing.T) {
	env := []string{"A=1", "TMPDIR=/tmp", "B=2"}
	got := setEnv(env, "TMPDIR=/tmp/corral-1")
	assert.Equal(t, []string{"A=1", "B=2", "TMPDIR=/tmp/corral-1"}, got)
	assert.Equal(t, "TMPDIR=/tmp", env[1], "the caller's slice is untouched")
}
