package nsjail

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral/internal/hosttest"
)

// Suffixes of the names of hosttest.CopySelf's copies that make TestMain behave as another kind
// of helper.
const (
	otherProtocolSuffix = ".other-protocol"
	silentSuffix        = ".silent"
)

func TestHelperRunsTheSpawnerAndInits(t *testing.T) {
	requireClone(t)
	for _, bare := range []bool{false, true} {
		t.Run(map[bool]string{false: "namespaces", true: "bare"}[bare], func(t *testing.T) {
			path := hosttest.CopySelf(t, "corral-helper")
			h, err := OpenHelper(path)
			require.NoError(t, err)
			o := Options{Helper: h, Ahead: 1, Bare: bare, TempBase: os.TempDir()}
			if bare {
				o.Landlock = &Landlock{ABI: 1}
			}
			j := newJail(t, o)
			_, out := run(t, j, "/bin/echo", "ran")
			assert.Equal(t, "ran\n", out)
			sp := sharedSpawner(h)
			assert.Equal(t, path, exeOf(t, sp.pid), "the spawner runs the helper, not this binary")
			// Renaming another file over the path changes nothing: the
			// spawner is started from the file opened first.
			replace(t, path)
			killSpawner(t, sp)
			_, out = run(t, j, "/bin/echo", "again")
			assert.Equal(t, "again\n", out)
			assert.Equal(t, path+" (deleted)", exeOf(t, sharedSpawner(h).pid))
		})
	}
}

// With Direct, each init is cloned from this process and runs the helper:
// no spawner is started.
func TestHelperDirect(t *testing.T) {
	requireClone(t)
	for _, bare := range []bool{false, true} {
		t.Run(map[bool]string{false: "namespaces", true: "bare"}[bare], func(t *testing.T) {
			path := hosttest.CopySelf(t, "corral-helper")
			h, err := OpenHelper(path)
			require.NoError(t, err)
			o := Options{Helper: h, Direct: true, Ahead: 1, Bare: bare, TempBase: os.TempDir()}
			if bare {
				o.Landlock = &Landlock{ABI: 1}
			}
			j := newJail(t, o)
			sharedMu.Lock()
			assert.Nil(t, shared[h], "no spawner for a direct caller")
			sharedMu.Unlock()
			p, _, err := start(t, j, "/bin/sleep", "60")
			require.NoError(t, err)
			assertInitRuns(t, p.Pid(), path)
			// Renaming another file over the path changes nothing: every
			// init runs the file opened first (the script would say no
			// hello).
			replace(t, path)
			p.Kill()
			p.Wait()
			p, _, err = start(t, j, "/bin/sleep", "60")
			require.NoError(t, err)
			assertInitRuns(t, p.Pid(), path+" (deleted)")
			p.Kill()
			p.Wait()
		})
	}
}

// assertInitRuns checks that the init pid runs the file at exe. A bare
// init is not dumpable once confined and shares no user namespace with
// us, so an unprivileged test cannot read its exe link; the caller's check
// that a second init still starts after a script was renamed over the
// path (the script would say no hello) then stands alone.
func assertInitRuns(t *testing.T, pid int, exe string) {
	t.Helper()
	got, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	if errors.Is(err, os.ErrPermission) {
		t.Logf("init %d is not dumpable: its exe link is not ours to read", pid)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, exe, got, "the init runs the helper, not this binary")
}

func exeOf(t *testing.T, pid int) string {
	t.Helper()
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	require.NoError(t, err)
	return exe
}

// replace renames a script over path.
func replace(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path+".new", []byte("#!/bin/sh\nexit 0\n"), 0o755))
	require.NoError(t, os.Rename(path+".new", path))
}

func killSpawner(t *testing.T, sp *spawner) {
	t.Helper()
	p, err := os.FindProcess(sp.pid)
	require.NoError(t, err)
	require.NoError(t, p.Kill())
	require.Eventually(t, sp.failed, 30*time.Second, 5*time.Millisecond)
}

func TestHelperThatCannotServe(t *testing.T) {
	requireClone(t)
	old := helloTimeout
	helloTimeout = time.Second // the silent one would take as long as this
	t.Cleanup(func() { helloTimeout = old })
	tests := []struct {
		name, path string
		want       string
	}{
		{"another version", hosttest.CopySelf(t, "corral"+otherProtocolSuffix), "speaks protocol"},
		{"not corral, exits", "/usr/bin/env", "not a corral binary"},
		// Refused as not corral's, or, where it has a second name this
		// process may write (as root on some hosts), for that.
		{"/bin/true", "/bin/true", "init helper: "},
		{"not corral, silent", hosttest.CopySelf(t, "corral"+silentSuffix), "no answer"},
	}
	for _, tt := range tests {
		for _, direct := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: " direct"}[direct], func(t *testing.T) {
				h, err := OpenHelper(tt.path)
				if err == nil {
					// A spawner says hello when New starts it; a direct
					// caller's init, at the first command.
					var j *Jail
					j, err = New(Options{Workspace: t.TempDir(), Helper: h, Direct: direct})
					if err == nil {
						t.Cleanup(func() { j.Close() })
						require.True(t, direct, "New checks the spawner")
						_, _, err = start(t, j, "/bin/true")
					}
				}
				var e *Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, LayerInit, e.Layer)
				real, rerr := filepath.EvalSymlinks(tt.path)
				require.NoError(t, rerr)
				assert.Equal(t, real, e.Path)
				assert.Contains(t, err.Error(), tt.want)
			})
		}
	}
}

func TestOpenHelperRefuses(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))
	linked := filepath.Join(dir, "linked")
	require.NoError(t, os.WriteFile(linked, []byte("x"), 0o755))
	require.NoError(t, os.Link(linked, filepath.Join(dir, "second-name")))
	tests := []struct{ path, want string }{
		{linked, "2 hard links"},
		{"corral", "not an absolute path"},
		{"./bin/corral", "not an absolute path"},
		{filepath.Join(dir, "missing"), "no such file"},
		{dir, "not a regular file"},
		{plain, "not executable"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := OpenHelper(tt.path)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "init helper")
		})
	}
}

var update = flag.Bool("update", false, "rewrite protocol_digest_linux.go")

// The protocol digest computed ahead is the one of the message types as
// they are now; -update rewrites it (go generate ./nsjail).
func TestProtocolDigestIsCurrent(t *testing.T) {
	want := typesDigest(protocolTypes()...)
	if *update {
		src := "// Code generated by go generate (TestProtocolDigestIsCurrent -update); DO NOT EDIT.\n\n" +
			"package nsjail\n\n// protocolDigest is typesDigest(protocolTypes()...).\n" +
			"const protocolDigest = \"" + want + "\"\n"
		require.NoError(t, os.WriteFile("protocol_digest_linux.go", []byte(src), 0o644))
		return
	}
	assert.Equal(t, want, protocolDigest, "a message type changed: run go generate ./nsjail")
}

func TestProtocolNamesEveryField(t *testing.T) {
	type a struct{ X int }
	type b struct {
		X int
		Y string `json:",omitempty"`
	}
	assert.NotEqual(t, typesDigest(a{}), typesDigest(b{}), "a field added changes the protocol")
	assert.Equal(t, protocol(), protocol())
	assert.True(t, strings.HasPrefix(protocol(), "corral-init/2 "))
}
