package landlock

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeFS is a tree of paths; names ending in "/" are directories, "@" marks
// a symlink.
type fakeFS struct{ m fstest.MapFS }

func newFake(paths ...string) fakeFS {
	m := fstest.MapFS{}
	for _, p := range paths {
		switch {
		case strings.HasSuffix(p, "/"):
			m[strings.Trim(p, "/")] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		case strings.HasSuffix(p, "@"):
			m[strings.Trim(p, "/@")] = &fstest.MapFile{Mode: fs.ModeSymlink | 0o777}
		default:
			m[strings.Trim(p, "/")] = &fstest.MapFile{Mode: 0o644}
		}
	}
	return fakeFS{m}
}

func rel(p string) string {
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

func (f fakeFS) Stat(p string) (fs.FileInfo, error)      { return f.m.Stat(rel(p)) }
func (f fakeFS) ReadDir(d string) ([]fs.DirEntry, error) { return f.m.ReadDir(rel(d)) }

// home is a small host: a project with a git directory beside secrets.
var home = newFake(
	"/bin/", "/bin/sh", "/etc/", "/etc/passwd", "/tmp/", "/dev/", "/dev/null", "/dev/pts/",
	"/home/", "/home/me/", "/home/me/.ssh/", "/home/me/.ssh/id_ed25519", "/home/me/notes.txt",
	"/home/me/link@", "/home/me/proj/", "/home/me/proj/main.go", "/home/me/proj/.env",
	"/home/me/proj/.git/", "/home/me/proj/.git/hooks/", "/home/me/proj/.git/config",
	"/home/me/proj/.git/objects/", "/home/other/",
)

func rulesOf(t *testing.T, in Input, fsys FS) map[string]Access {
	t.Helper()
	p, err := Build(in, fsys)
	require.NoError(t, err)
	out := map[string]Access{}
	for _, r := range p.Rules {
		_, dup := out[r.Path]
		require.False(t, dup, "two rules for %s", r.Path)
		out[r.Path] = r.Access
	}
	return out
}

// effective computes what Landlock grants at p: the union of the rules on p
// and its ancestors.
func effective(rules map[string]Access, p string) Access {
	var a Access
	for {
		a |= rules[p]
		if p == "/" {
			return a
		}
		p = path.Dir(p)
	}
}

func TestBuildFullRung(t *testing.T) {
	// The mount tree enforces read-only and hidden paths, so the entries
	// are only the granting ones: one rule each, no directory listed.
	in := Input{ABI: 7, Scope: true, Entries: []Entry{
		{"/", ReadOnly}, {"/home/me/proj", ReadWrite}, {"/tmp", ReadWrite},
		{"/dev/null", Device}, {"/dev/pts", Terminal},
	}}
	rules := rulesOf(t, in, home)
	handled := HandledFS(7)
	assert.Equal(t, map[string]Access{
		"/":             ReadOnly,
		"/home/me/proj": ReadWrite & handled,
		"/tmp":          ReadWrite & handled,
		"/dev/null":     Device & fileRights,
		"/dev/pts":      Terminal,
	}, rules)
}

func TestBuildCarvesHiddenAndReadOnly(t *testing.T) {
	in := Input{ABI: 7, Entries: []Entry{
		{"/", ReadOnly},
		{"/home/me/proj", ReadWrite},
		{"/home/me/.ssh", None},
		{"/home/me/proj/.env", None},
		{"/home/me/proj/.git/hooks", ReadOnly},
		{"/home/me/proj/.git/config", ReadOnly},
	}}
	rules := rulesOf(t, in, home)
	rw := ReadWrite & HandledFS(7)
	cases := []struct {
		path string
		want Access
	}{
		{"/etc/passwd", ReadOnly},
		{"/bin/sh", ReadOnly},
		{"/home/other", ReadOnly},
		{"/home/me/notes.txt", ReadOnly & fileRights},
		{"/home/me/.ssh", None},
		{"/home/me/.ssh/id_ed25519", None},
		{"/home/me/proj/main.go", rw & fileRights},
		{"/home/me/proj/.env", None},
		{"/home/me/proj/.git/objects", rw},
		{"/home/me/proj/.git/hooks", ReadOnly},
		{"/home/me/proj/.git/config", ReadOnly},
		// Ancestors of hidden paths get nothing of their own.
		{"/", None},
		{"/home", None},
		{"/home/me", None},
		{"/home/me/proj", None},
		// Above read-only paths only, reading stays allowed.
		{"/home/me/proj/.git", ReadOnly},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, effective(rules, c.path), c.path)
	}
	assert.NotContains(t, rules, "/home/me/link", "a symlink's rule would grant its target")
}

func TestBuildWritableInsideReadOnly(t *testing.T) {
	in := Input{ABI: 3, Entries: []Entry{
		{"/", ReadOnly}, {"/home/me", ReadOnly}, {"/home/me/proj", ReadWrite},
	}}
	rules := rulesOf(t, in, home)
	assert.Equal(t, map[string]Access{"/": ReadOnly, "/home/me/proj": ReadWrite & HandledFS(3)}, rules)
}

func TestBuildSkipsMissingEntries(t *testing.T) {
	// A protected name that does not exist carves nothing: the workspace
	// keeps one rule.
	in := Input{ABI: 7, Entries: []Entry{
		{"/", ReadOnly}, {"/home/me/proj", ReadWrite}, {"/home/me/proj/.bashrc", ReadOnly},
	}}
	rules := rulesOf(t, in, home)
	assert.Equal(t, ReadWrite&HandledFS(7), rules["/home/me/proj"])
}

func TestBuildDuplicateEntriesKeepCommonRights(t *testing.T) {
	in := Input{ABI: 7, Entries: []Entry{{"/home/me/proj", ReadWrite}, {"/home/me/proj", ReadOnly}}}
	assert.Equal(t, map[string]Access{"/home/me/proj": ReadOnly}, rulesOf(t, in, home))
}

func TestBuildMasksRightsByABI(t *testing.T) {
	for abi := 1; abi <= 10; abi++ {
		rules := rulesOf(t, Input{ABI: abi, Entries: []Entry{{"/tmp", ReadWrite}, {"/dev/pts", Terminal}}}, home)
		for p, a := range rules {
			assert.Zero(t, a&^HandledFS(abi), "ABI %d %s", abi, p)
		}
	}
	assert.Zero(t, HandledFS(4)&ll.AccessFSIoctlDev)
	assert.NotZero(t, HandledFS(5)&ll.AccessFSIoctlDev)
	assert.NotZero(t, HandledFS(12)&ll.AccessFSResolveUnix)
}

func TestBuildFilesGetFileRightsOnly(t *testing.T) {
	rules := rulesOf(t, Input{ABI: 7, Entries: []Entry{{"/dev/null", ReadWrite}}}, home)
	assert.Equal(t, ReadWrite&fileRights, rules["/dev/null"])
}

func TestBuildNetAndScope(t *testing.T) {
	p, err := Build(Input{ABI: 6, DenyTCP: true, Scope: true}, home)
	require.NoError(t, err)
	assert.Equal(t, uint64(ll.AccessNetBindTCP|ll.AccessNetConnectTCP), p.HandledNet)
	assert.Equal(t, uint64(ll.ScopeAbstractUnixSocket|ll.ScopeSignal), p.Scoped)

	p, err = Build(Input{ABI: 6}, home)
	require.NoError(t, err)
	assert.Zero(t, p.HandledNet)
	assert.Zero(t, p.Scoped)
}

func TestBuildRefusesWhatTheKernelLacks(t *testing.T) {
	cases := []struct {
		name string
		in   Input
	}{
		{"no landlock", Input{ABI: 0}},
		{"tcp before ABI 4", Input{ABI: 3, DenyTCP: true}},
		{"scope before ABI 6", Input{ABI: 5, Scope: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Build(c.in, home)
			require.ErrorIs(t, err, ErrUnsupported)
		})
	}
	_, err := Build(Input{ABI: 7, Entries: []Entry{{"tmp/x", ReadOnly}}}, home)
	require.ErrorContains(t, err, "absolute")
}

func TestBuildDoesNotListWithoutCarving(t *testing.T) {
	in := Input{ABI: 7, Entries: []Entry{{"/", ReadOnly}, {"/home/me/proj", ReadWrite}, {"/tmp", ReadWrite}}}
	_, err := Build(in, noList{home})
	require.NoError(t, err)
}

// noList fails every listing, to show which builds need none.
type noList struct{ fakeFS }

func (noList) ReadDir(string) ([]fs.DirEntry, error) { panic("ReadDir called") }

func TestNextNames(t *testing.T) {
	got := nextNames("/home", []string{"/home/me/a", "/home/me/b", "/home/you"})
	assert.Equal(t, []string{"me", "you"}, got)
	assert.True(t, slices.Equal(nextNames("/", []string{"/tmp"}), []string{"tmp"}))
}

func TestBuildSkipsPathsBeneathAFile(t *testing.T) {
	// A writable path may be a file; the protected names joined to it lie
	// beneath a file, which the kernel answers with ENOTDIR, not ENOENT.
	dir := t.TempDir()
	file := path.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	in := Input{ABI: 7, Entries: []Entry{
		{"/", ReadOnly}, {file, ReadWrite}, {path.Join(file, ".git/hooks"), ReadOnly}, {path.Join(file, ".bashrc"), ReadOnly},
	}}
	rules := rulesOf(t, in, OS())
	assert.Equal(t, (ReadWrite&fileRights)&HandledFS(7), rules[file])
	assert.NotContains(t, rules, path.Join(file, ".bashrc"))
}
