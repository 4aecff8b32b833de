package nsjail

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

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
	got := entryMap(landlockEntries(&setup{Paths: paths}))
	assert.Equal(t, map[string]landlock.Access{
		"/":              landlock.ReadOnly,
		"/home/me/proj":  landlock.ReadWrite,
		"/home/me/cache": landlock.ReadWrite,
		"/tmp":           landlock.ReadWrite,
		"/dev/shm":       landlock.ReadWrite,
		"/dev/null":      landlock.Device,
		"/dev/zero":      landlock.Device,
		"/dev/full":      landlock.Device,
		"/dev/random":    landlock.ReadOnly,
		"/dev/urandom":   landlock.ReadOnly,
		"/dev/tty":       landlock.Terminal,
		"/dev/pts":       landlock.Terminal,
	}, got, "the mount tree enforces read-only and hidden paths: nothing to carve")
}

func TestLandlockEntriesBare(t *testing.T) {
	s := &setup{Paths: paths, Bare: true, TmpDir: "/tmp/corral-123"}
	got := entryMap(landlockEntries(s))
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
		"/dev/random":         landlock.ReadOnly,
		"/dev/urandom":        landlock.ReadOnly,
		"/dev/tty":            landlock.Terminal,
		"/dev":                landlock.None,
		"/tmp":                landlock.None,
		"/var/tmp":            landlock.None,
	}, got, "no host /tmp, /dev/shm, /dev/pts or other device: only what is named")
}

func TestLandlockEntriesBareKeepsConfiguredTemp(t *testing.T) {
	in := paths
	in.Writable = append([]string{"/tmp"}, in.Writable...)
	s := &setup{Paths: in, Bare: true, TmpDir: "/home/me/proj/corral-1"}
	got := landlockEntries(s)
	for _, e := range got {
		if e.Path == "/tmp" || e.Path == "/home/me/proj" {
			assert.Equal(t, landlock.ReadWrite, e.Access, "%s is configured writable: it is not carved out", e.Path)
		}
	}
	assert.Equal(t, landlock.None, entryMap(got)["/dev"])
}

func TestStdioRules(t *testing.T) {
	const (
		read     = ll.AccessFSReadFile
		write    = ll.AccessFSWriteFile | ll.AccessFSTruncate
		ioctlDev = ll.AccessFSIoctlDev
	)
	name := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(name, nil, 0o600))
	cases := []struct {
		name  string
		path  string
		flags int
		want  landlock.Access
	}{
		{"file read", name, os.O_RDONLY, read},
		{"file write", name, os.O_WRONLY, write},
		{"file read and write", name, os.O_RDWR, read | write},
		{"file append", name, os.O_WRONLY | os.O_APPEND, ll.AccessFSWriteFile},
		{"file read and append", name, os.O_RDWR | os.O_APPEND, read | ll.AccessFSWriteFile},
		{"device read", os.DevNull, os.O_RDONLY, read | ioctlDev},
		{"device write", os.DevNull, os.O_WRONLY, write | ioctlDev},
		{"directory", t.TempDir(), os.O_RDONLY, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := os.OpenFile(c.path, c.flags, 0)
			require.NoError(t, err)
			defer f.Close()
			es := stdioRules([]*os.File{f}, landlock.HandledFS(9))
			if c.want == 0 {
				assert.Empty(t, es, "nothing to reopen with")
				return
			}
			require.Len(t, es, 1)
			assert.Equal(t, c.want, es[0].Access)
			assert.Equal(t, fmt.Sprintf("/proc/self/fd/%d", f.Fd()), es[0].Path, "granted by descriptor, not by name")
		})
	}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.Empty(t, stdioRules([]*os.File{r, w}, landlock.HandledFS(9)), "pipes need no rule")
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

// Without unix sockets no writable path takes a socket file, on either
// rung, nor the init's own paths (a clone of a writable root has its
// root's inode, where Landlock's rules bind).
func TestLandlockEntriesNoSockets(t *testing.T) {
	for _, bare := range []bool{false, true} {
		s := &setup{Paths: paths, Bare: bare, TmpDir: "/tmp/corral-x/cmd", Landlock: &Landlock{ABI: 6, NoSockets: true}}
		es := append(landlockEntries(s), initOnly(s, []string{"/proc/self/fd/9"})...)
		writable := 0
		for _, e := range es {
			assert.Zero(t, e.Access&ll.AccessFSMakeSock, "%s grants socket files", e.Path)
			if e.Access&ll.AccessFSMakeReg != 0 {
				writable++
			}
		}
		assert.GreaterOrEqual(t, writable, 4, "the writable paths stay writable")
		s.Landlock.NoSockets = false
		assert.Equal(t, landlock.ReadWrite, entryMap(landlockEntries(s))["/home/me/proj"], "with unix sockets")
	}
}
