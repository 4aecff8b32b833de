package corral

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveDefaultsAndCanonicalizes(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(real, link))
	s, err := Config{Workspace: link, ReadOnlyPaths: []string{link + "/../link", link}}.resolve()
	require.NoError(t, err)
	want, _ := filepath.EvalSymlinks(real)
	assert.Equal(t, ModeEnabled, s.Mode)
	assert.Equal(t, NetworkHost, s.Network)
	assert.Equal(t, want, s.Workspace, "symlinks resolved")
	assert.Equal(t, []string{want}, s.ReadOnly, "duplicates dropped")
}

func TestResolveRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.Mkdir("sub", 0o755))
	s, err := Config{Workspace: "sub"}.resolve()
	require.NoError(t, err)
	want, _ := filepath.EvalSymlinks(filepath.Join(dir, "sub"))
	assert.Equal(t, want, s.Workspace)
}

func TestResolveErrors(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"workspace required", Config{}, "config Workspace: required"},
		{"empty path", Config{Workspace: ws, WritablePaths: []string{""}}, "config WritablePaths: empty path"},
		{"nul byte", Config{Workspace: ws, HiddenPaths: []string{"a\x00b"}}, "NUL"},
		{"bad env", Config{Workspace: ws, Env: []string{"=x"}}, "config Env: =x: want KEY or KEY=VALUE"},
		{"bad planting name", Config{Workspace: ws, AllowPlanting: []string{".git/hooks"}}, "not one of corral.ProtectedNames()"},
		{"protect absolute", Config{Workspace: ws, Protect: []string{"/etc/x"}}, "config Protect: /etc/x: want a name relative to each writable root, not an absolute path"},
		{"protect dotdot", Config{Workspace: ws, Protect: []string{"a/../../b"}}, "config Protect: a/../../b: must not hold \"..\""},
		{"protect unclean", Config{Workspace: ws, Protect: []string{"tools//hooks/"}}, "config Protect: tools//hooks/: not clean (want tools/hooks)"},
		{"protect empty", Config{Workspace: ws, Protect: []string{""}}, "config Protect"},
		{"protect dot", Config{Workspace: ws, Protect: []string{"."}}, "config Protect"},
		{"protect star", Config{Workspace: ws, Protect: []string{"*"}}, "config Protect: *: a pattern needs the end names share (*.code-workspace)"},
		{"protect pattern with a slash", Config{Workspace: ws, Protect: []string{"*.x/y"}}, "config Protect: *.x/y: a pattern matches a name at every depth and holds no slash"},
		{"protect held", Config{Workspace: ws, Protect: []string{".corral-held"}}, "config Protect"},
		{"protect and allow", Config{Workspace: ws, Protect: []string{".envrc"}, AllowPlanting: []string{".envrc"}}, "config Protect: .envrc: AllowPlanting lists it too"},
		{"hide the root", Config{Workspace: ws, HiddenPaths: []string{"/"}}, "cannot hide the root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.cfg.resolve()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestDisabledNeedsNoWorkspace(t *testing.T) {
	_, err := Config{Mode: ModeDisabled}.resolve()
	assert.NoError(t, err)
}

func TestDefaultEnv(t *testing.T) {
	caller := []string{
		"PATH=/bin", "HOME=/h", "LANG=C", "LC_ALL=C", "TERM=xterm",
		"OPENAI_API_KEY=sk-1", "GITHUB_TOKEN=t", "DB_PASSWORD=p", "MY_SECRET=s", "LC_SECRET=x",
		"EDITOR=vi", "CALLER_ONLY=from-caller",
	}
	env := defaultEnv(caller, []string{"EDITOR", "PATH=/custom", "EXTRA=1", "CALLER_ONLY", "ABSENT"})
	assert.Equal(t, []string{
		"PATH=/custom", "HOME=/h", "LANG=C", "LC_ALL=C", "TERM=xterm",
		"EDITOR=vi", "EXTRA=1", "CALLER_ONLY=from-caller",
	}, env)
}

func TestProcessStateStrings(t *testing.T) {
	assert.Equal(t, "exit status 3", (&ProcessState{status: 3 << 8}).String())
	assert.Equal(t, "signal: killed", (&ProcessState{status: 9}).String())
	assert.Equal(t, -1, (&ProcessState{status: 9}).ExitCode())
	assert.True(t, (&ProcessState{status: 0}).Success())
	assert.Equal(t, -1, (*ProcessState)(nil).ExitCode())
}

func TestNewWithoutInit(t *testing.T) {
	initCalled.Store(false)
	defer initCalled.Store(true)
	_, err := New(Config{Workspace: t.TempDir()})
	require.ErrorIs(t, err, ErrNoInit)
	_, err = New(Config{Mode: ModeDisabled})
	assert.NoError(t, err, "a disabled sandbox re-executes nothing")
}
