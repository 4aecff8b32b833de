package corral

import (
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func realTemp(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// fakeHome makes $HOME a fresh directory holding the named files (a name
// ending in "/" is a directory).
func fakeHome(t *testing.T, names ...string) string {
	home := filepath.Join(realTemp(t), "home")
	require.NoError(t, os.Mkdir(home, 0o755))
	for _, n := range names {
		p := filepath.Join(home, n)
		if n[len(n)-1] == '/' {
			require.NoError(t, os.MkdirAll(p, 0o700))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte("secret"), 0o600))
	}
	t.Setenv("HOME", home)
	return home
}

func TestResolveRefusesPseudoFilesystems(t *testing.T) {
	ws := realTemp(t)
	link := filepath.Join(realTemp(t), "proc-link")
	require.NoError(t, os.Symlink("/proc/self", link))
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"root as workspace", Config{Workspace: "/"}, "config Workspace: /: is the root directory"},
		{"root writable", Config{Workspace: ws, WritablePaths: []string{"/"}}, "config WritablePaths: /: is the root directory"},
		{"root read-only", Config{Workspace: ws, ReadOnlyPaths: []string{"/"}}, "config ReadOnlyPaths: /: is the root directory"},
		{"/proc writable", Config{Workspace: ws, WritablePaths: []string{"/proc"}}, "lies in /proc, a kernel pseudo-filesystem"},
		{"/proc subtree", Config{Workspace: ws, WritablePaths: []string{"/proc/sys"}}, "lies in /proc"},
		{"/sys read-only", Config{Workspace: ws, ReadOnlyPaths: []string{"/sys/kernel"}}, "lies in /sys"},
		{"/dev writable", Config{Workspace: ws, WritablePaths: []string{"/dev"}}, "lies in /dev"},
		{"/dev/shm writable", Config{Workspace: ws, WritablePaths: []string{"/dev/shm"}}, "lies in /dev"},
		{"/dev as workspace", Config{Workspace: "/dev"}, "config Workspace: /dev: lies in /dev"},
		{"a symlink to /proc", Config{Workspace: ws, WritablePaths: []string{link}}, "lies in /proc"},
		{"changeset path", Config{Workspace: ws, WritablePaths: []string{"/sys"}, ChangesetPaths: []string{"/sys"}, Changeset: filepath.Join(realTemp(t), "cs")}, "lies in /sys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.cfg.resolve()
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, ErrRefusedPath)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestResolveRefusesAWritableHome(t *testing.T) {
	home := fakeHome(t, "project/")
	project := filepath.Join(home, "project")
	refused := []struct {
		name string
		cfg  Config
		want string
	}{
		{"home as workspace", Config{Workspace: home}, "config Workspace: " + home + ": is the home directory " + home},
		{"parent of home", Config{Workspace: filepath.Dir(home)}, "holds the home directory " + home},
		{"home writable", Config{Workspace: project, WritablePaths: []string{home}}, "config WritablePaths: " + home},
	}
	if u, err := user.Current(); err == nil {
		if pw, err := filepath.EvalSymlinks(u.HomeDir); err == nil && pw != "/" {
			refused = append(refused, struct {
				name string
				cfg  Config
				want string
			}{"the passwd entry's home", Config{Workspace: pw}, "is the home directory " + pw})
		}
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.cfg.resolve()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrWritableHome)
			assert.ErrorIs(t, err, ErrRefusedPath)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "AllowHome")

			tc.cfg.AllowHome = true
			_, err = tc.cfg.resolve()
			assert.NoError(t, err, "AllowHome allows it")
		})
	}
	for _, ok := range []Config{
		{Workspace: project},
		{Workspace: project, ReadOnlyPaths: []string{home}},
		{Mode: ModeDisabled, Workspace: home},
	} {
		_, err := ok.resolve()
		assert.NoError(t, err, "%+v", ok)
	}
	_, err := Config{Workspace: "/", AllowHome: true}.resolve()
	assert.ErrorIs(t, err, ErrRefusedPath, "AllowHome never allows /")
}

func TestCredentialStoresHiddenByDefault(t *testing.T) {
	home := fakeHome(t, ".ssh/id_ed25519", ".aws/credentials", ".netrc", ".config/gh/hosts.yml", ".docker/config.json", "project/")
	other := realTemp(t)
	require.NoError(t, os.Mkdir(filepath.Join(other, "kube"), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(other, "kube"), filepath.Join(home, ".kube")))
	ws := filepath.Join(home, "project")

	s, err := Config{Workspace: ws}.resolve()
	require.NoError(t, err)
	for _, p := range []string{".ssh", ".aws", ".netrc", ".config/gh", ".docker/config.json"} {
		assert.Contains(t, s.DefaultHidden, filepath.Join(home, p))
		assert.Contains(t, s.Hidden, filepath.Join(home, p))
	}
	assert.Contains(t, s.DefaultHidden, filepath.Join(other, "kube"), "a store behind a symlink is hidden where it lies")
	assert.NotContains(t, s.DefaultHidden, filepath.Join(home, ".gnupg"), "missing stores are left out, without error")
	assert.Contains(t, CredentialStores(), filepath.Join(home, ".gnupg"), "but listed")

	s, err = Config{Workspace: ws, Reveal: []string{filepath.Join(home, ".aws"), filepath.Join(home, ".kube")}}.resolve()
	require.NoError(t, err)
	assert.NotContains(t, s.Hidden, filepath.Join(home, ".aws"), "revealed by name")
	assert.NotContains(t, s.Hidden, filepath.Join(other, "kube"), "revealed by the name of its link")
	assert.Contains(t, s.Hidden, filepath.Join(home, ".ssh"))

	s, err = Config{Workspace: ws, Reveal: []string{home}}.resolve()
	require.NoError(t, err)
	assert.NotContains(t, s.Hidden, filepath.Join(home, ".ssh"), "a directory reveals the stores beneath it")

	s, err = Config{Workspace: ws, HiddenPaths: []string{filepath.Join(home, ".ssh", "id_ed25519")}}.resolve()
	require.NoError(t, err)
	assert.Contains(t, s.Hidden, filepath.Join(home, ".ssh"))
	assert.NotContains(t, s.Hidden, filepath.Join(home, ".ssh", "id_ed25519"), "nothing to hide inside a hidden directory")

	r, err := Config{Workspace: ws, HiddenPaths: []string{filepath.Join(home, ".ssh")}}.Resolved()
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(home, ".ssh")}, r.HiddenPaths, "Resolved keeps explicit and default apart")
	def, err := Config{Workspace: ws, HiddenPaths: []string{filepath.Join(home, ".ssh")}}.DefaultHidden()
	require.NoError(t, err)
	assert.NotContains(t, def, filepath.Join(home, ".ssh"))
	assert.Contains(t, def, filepath.Join(home, ".aws"))
}

func TestCredentialStoreConflicts(t *testing.T) {
	home := fakeHome(t, ".ssh/id_ed25519", ".config/gh/hosts.yml", "project/")
	ssh := filepath.Join(home, ".ssh")

	_, err := Config{Workspace: ssh}.resolve()
	require.ErrorIs(t, err, ErrRefusedPath, "a workspace inside a credential store")
	assert.Contains(t, err.Error(), "config Workspace: "+ssh+": lies in "+ssh+", a credential store hidden by default; add it to Reveal")
	_, err = Config{Workspace: filepath.Join(home, "project"), ReadOnlyPaths: []string{filepath.Join(ssh, "id_ed25519")}}.resolve()
	require.ErrorIs(t, err, ErrRefusedPath, "a read-only path inside one")
	s, err := Config{Workspace: ssh, Reveal: []string{ssh}}.resolve()
	require.NoError(t, err, "revealed, it may be the workspace")
	assert.NotContains(t, s.Hidden, ssh)

	s, err = Config{Workspace: filepath.Join(home, "project"), WritablePaths: []string{filepath.Join(home, ".config")}}.resolve()
	require.NoError(t, err, "a store inside a writable path stays hidden in it")
	assert.Contains(t, s.Hidden, filepath.Join(home, ".config/gh"))

	s, err = Config{Workspace: home, AllowHome: true}.resolve()
	require.NoError(t, err, "an allowed writable home keeps its stores hidden")
	assert.Contains(t, s.Hidden, ssh)

	_, err = Config{Workspace: filepath.Join(home, "project"), Reveal: []string{"/no/such/store"}}.resolve()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Reveal", ce.Field)
}

func TestUnreadableStoreNeedsNoHiding(t *testing.T) {
	home := fakeHome(t, ".aws/credentials", "project/")
	require.NoError(t, os.Chmod(filepath.Join(home, ".aws"), 0))
	t.Cleanup(func() { os.Chmod(filepath.Join(home, ".aws"), 0o700) })
	s, err := Config{Workspace: filepath.Join(home, "project")}.resolve()
	require.NoError(t, err)
	// root reads anything: only there does the store need a mount.
	assert.Equal(t, os.Geteuid() == 0, slices.Contains(s.Hidden, filepath.Join(home, ".aws")))
}

func TestPolicyFiles(t *testing.T) {
	fakeHome(t)
	ws := realTemp(t)
	outside := realTemp(t)
	inWs := filepath.Join(ws, "conf", "corral.toml")
	require.NoError(t, os.Mkdir(filepath.Dir(inWs), 0o755))
	require.NoError(t, os.WriteFile(inWs, []byte("x"), 0o644))
	real := filepath.Join(outside, "corral.toml")
	require.NoError(t, os.WriteFile(real, []byte("x"), 0o644))
	linkInWs := filepath.Join(ws, "link.toml")
	require.NoError(t, os.Symlink(real, linkInWs))
	linkOutside := filepath.Join(outside, "link.toml")
	require.NoError(t, os.Symlink(inWs, linkOutside))
	dirLink := filepath.Join(ws, "confdir")
	require.NoError(t, os.Symlink(outside, dirLink))

	s, err := Config{Workspace: ws, PolicyFiles: []string{inWs}}.resolve()
	require.NoError(t, err)
	assert.Equal(t, []string{inWs}, s.Policy)
	assert.Contains(t, s.ReadOnly, inWs, "kept read-only inside the workspace")

	s, err = Config{Workspace: ws, PolicyFiles: []string{linkOutside}}.resolve()
	require.NoError(t, err, "a link the command cannot change")
	assert.Contains(t, s.ReadOnly, inWs, "protected where it lies")

	for _, bad := range []string{linkInWs, filepath.Join(dirLink, "corral.toml")} {
		_, err = Config{Workspace: ws, PolicyFiles: []string{bad}}.resolve()
		require.ErrorIs(t, err, ErrRefusedPath, bad)
		assert.Contains(t, err.Error(), "inside the writable path "+ws)
	}

	hard := filepath.Join(ws, "hard.toml")
	require.NoError(t, os.Link(real, hard))
	_, err = Config{Workspace: ws, PolicyFiles: []string{real}}.resolve()
	require.ErrorIs(t, err, ErrRefusedPath, "a second link could be written")
	assert.Contains(t, err.Error(), "more than one hard link")
	require.NoError(t, os.Remove(hard))

	_, err = Config{Workspace: ws, PolicyFiles: []string{filepath.Join(ws, "missing.toml")}}.resolve()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "PolicyFiles", ce.Field)

	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	s, err = Config{Workspace: ws, PolicyFiles: []string{"/proc/self/fd/" + strconv.Itoa(int(r.Fd()))}}.resolve()
	require.NoError(t, err, "a pipe holds nothing to protect")
	assert.Empty(t, s.Policy)

	s, err = Config{Workspace: ws, HiddenPaths: []string{filepath.Join(ws, "conf")}, PolicyFiles: []string{inWs}}.resolve()
	require.NoError(t, err, "a hidden policy file needs no read-only mount")
	assert.NotContains(t, s.ReadOnly, inWs)

	rc, err := Config{Workspace: ws, PolicyFiles: []string{linkOutside}}.Resolved()
	require.NoError(t, err)
	assert.Equal(t, []string{inWs}, rc.PolicyFiles)
}

// TestCredentialStoresDocumented keeps docs/layers.md listing every store.
// It finds the file from this source file, as the unprivileged run starts
// the binary elsewhere.
func TestCredentialStoresDocumented(t *testing.T) {
	_, self, _, ok := runtime.Caller(0)
	require.True(t, ok)
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(self), "docs", "layers.md"))
	require.NoError(t, err)
	inHome, system := credentialStoreNames()
	for _, n := range inHome {
		assert.Contains(t, string(doc), "`"+n+"`")
	}
	for _, n := range system {
		if strings.HasPrefix(n, "/etc/ssh/ssh_host_") {
			kind := strings.TrimSuffix(strings.TrimPrefix(n, "/etc/ssh/ssh_host_"), "_key")
			assert.Regexp(t, "/etc/ssh/ssh_host_\\{[a-z0-9,]*"+kind+"[a-z0-9,]*\\}_key", string(doc))
			continue
		}
		assert.Contains(t, string(doc), "`"+n+"`")
	}
}

// /root is hidden whole only when it is not the caller's home, and yields
// to a configured path inside it where every other store refuses one.
func TestRootHomeStore(t *testing.T) {
	fakeHome(t)
	assert.Equal(t, !slices.Contains(callerHomes(), rootHome), slices.Contains(CredentialStores(), rootHome))

	s := &spec{Workspace: "/root/project"}
	skip, err := s.storeConflict(store{name: rootHome, real: rootHome})
	assert.True(t, skip, "left visible")
	assert.NoError(t, err)
	skip, err = s.storeConflict(store{name: "/root/project", real: "/root/project"})
	assert.True(t, skip)
	assert.ErrorIs(t, err, ErrRefusedPath)
	skip, err = s.storeConflict(store{name: "/srv/keys", real: "/srv/keys"})
	assert.False(t, skip, "unrelated")
	assert.NoError(t, err)
}

// A workspace or writable path that is itself a git directory cannot be
// staged in itself: it is refused unless AllowPlanting lists .git. A HEAD
// git would not take, and a read-only git directory, are fine.
func TestResolveRefusesAGitDirectoryRoot(t *testing.T) {
	bare, work, inert := t.TempDir(), t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bare, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(inert, "HEAD"), []byte("notes\n"), 0o644))
	for _, cfg := range []Config{
		{Workspace: bare},
		{Workspace: work, WritablePaths: []string{bare}},
	} {
		_, err := cfg.resolve()
		require.ErrorIs(t, err, ErrRefusedPath)
		assert.Contains(t, err.Error(), bare+": is a git directory")
		cfg.AllowPlanting = []string{".git"}
		_, err = cfg.resolve()
		assert.NoError(t, err, "AllowPlanting .git allows it")
	}
	for _, ok := range []Config{
		{Workspace: inert},
		{Workspace: work, ReadOnlyPaths: []string{bare}},
	} {
		_, err := ok.resolve()
		assert.NoError(t, err, "%+v", ok)
	}
}
