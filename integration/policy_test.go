//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/config"
)

const policyEnabled = "[[agents]]\nid = \"a\"\n\n[agents.sandbox]\nmode = \"enabled\"\n"

// disable is shell that writes a config disabling the sandbox to $1.
const disable = `printf '[[agents]]\nid = "a"\n[agents.sandbox]\nmode = "disabled"\n' > "$1"`

// policyAttacks try to change the config file that configures the sandbox
// they run in, so that the next command runs unsandboxed.
var policyAttacks = []struct{ name, script string }{
	{"rewrite it", `set -- conf/corral.toml; ` + disable},
	{"edit it with sed -i", `sed -i 's/enabled/disabled/' conf/corral.toml`},
	{"truncate it and append", `: > conf/corral.toml; set -- /dev/stdout; ` + disable + ` >> conf/corral.toml`},
	{"rename a new file over it", `set -- conf/new.toml; ` + disable + `; mv -f conf/new.toml conf/corral.toml`},
	{"delete and recreate it", `rm -f conf/corral.toml; set -- conf/corral.toml; ` + disable},
	{"move its directory aside", `mv conf conf.old && mkdir conf && set -- conf/corral.toml && ` + disable},
	{"replace its directory by a symlink", `mv conf conf.old && mkdir other && set -- other/corral.toml && ` + disable + ` && ln -s other conf`},
}

// policyScene is a workspace holding the config file its sandbox is built
// from, as docs/cli.md (--config) allows.
func policyScene(t *testing.T) (w *world, file string) {
	w = newWorld(t)
	file = filepath.Join(w.ws, "conf", "corral.toml")
	require.NoError(t, os.Mkdir(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte(policyEnabled), 0o644))
	return w, file
}

func policyConfig(t *testing.T, w *world, file string) corral.Config {
	cfg, err := config.Load(file)
	require.NoError(t, err)
	c := cfg.Agents[0].Sandbox.CorralConfig()
	c.Workspace = w.ws
	return c
}

func policyMode(t *testing.T, file string) corral.Mode {
	cfg, err := config.Load(file)
	if err != nil {
		return "unreadable: " + corral.Mode(err.Error())
	}
	return cfg.Agents[0].Sandbox.Mode
}

func TestPolicyFileIsReadOnlyToItsSandbox(t *testing.T) {
	for _, a := range policyAttacks {
		t.Run(a.name, func(t *testing.T) {
			bare, file := policyScene(t)
			cfg := policyConfig(t, bare, file)
			require.Equal(t, []string{file}, cfg.PolicyFiles, "Load records the file")
			cfg.PolicyFiles = nil
			r := bare.sandboxed(cfg, a.script)
			require.Equal(t, corral.ModeDisabled, policyMode(t, file), "the probe must work without the protection:\n%s", r)

			boxed, file := policyScene(t)
			r = boxed.sandboxed(policyConfig(t, boxed, file), a.script)
			assert.Equal(t, corral.ModeEnabled, policyMode(t, file), "rewrote its own policy:\n%s", r)
			got, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, policyEnabled, string(got))

			next := boxed.sandboxed(policyConfig(t, boxed, file), `echo escaped > "$OUTSIDE/next"; cat /proc/1/cmdline | tr '\0' ' '`)
			assert.False(t, exists(filepath.Join(boxed.outside, "next")), "the next command ran unsandboxed:\n%s", next)
		})
	}
}

// A policy file reached through a symlink the command could replace is
// refused: protecting the target would leave the link free to point
// elsewhere.
func TestPolicyFileBehindAWritableSymlinkIsRefused(t *testing.T) {
	w := newWorld(t)
	real := filepath.Join(w.outside, "corral.toml")
	require.NoError(t, os.WriteFile(real, []byte(policyEnabled), 0o644))
	link := filepath.Join(w.ws, "corral.toml")
	require.NoError(t, os.Symlink(real, link))
	_, err := corral.New(policyConfig(t, w, link))
	require.ErrorIs(t, err, corral.ErrRefusedPath)
	assert.Contains(t, err.Error(), "symlink "+link)
}

// credentialHome is a fake home directory, set as $HOME, holding a file in
// each kind of credential store. It is configured read-only so that the
// sandbox shows it at all (it lies under /tmp, which the sandbox replaces).
func credentialHome(t *testing.T) (home string, files map[string]string) {
	home = filepath.Join(realDir(t), "home")
	files = map[string]string{}
	for _, f := range []string{
		".ssh/id_ed25519", ".aws/credentials", ".config/gh/hosts.yml", ".netrc", ".docker/config.json",
		".kube/config", ".gnupg/private-keys-v1.d/key.key", ".git-credentials", ".config/gcloud/credentials.db",
		".azure/msal_token_cache.json", ".npmrc", ".pypirc", ".cargo/credentials.toml", ".password-store/mail.gpg",
	} {
		p := filepath.Join(home, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte("credential-"+f), 0o600))
		files[f] = p
	}
	t.Setenv("HOME", home)
	return home, files
}

func TestCredentialStoresAreHiddenByDefault(t *testing.T) {
	home, files := credentialHome(t)
	type target struct{ name, path, store string }
	var targets []target
	for f, p := range files {
		store, _, _ := strings.Cut(f, "/")
		if strings.HasPrefix(f, ".config/") {
			store = f[:strings.Index(f[len(".config/"):], "/")+len(".config/")]
		}
		if f == ".docker/config.json" {
			store = f
		}
		targets = append(targets, target{f, p, filepath.Join(home, store)})
	}
	if _, err := os.ReadFile("/etc/shadow"); err == nil { // root: the host lets the caller read it
		targets = append(targets, target{"/etc/shadow", "/etc/shadow", "/etc/shadow"})
	}
	w := newWorld(t)
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			script := `cat "$1"`
			bare := w.bare(`cat "` + tg.path + `"`)
			require.Equal(t, 0, bare.code, "the probe must work without the sandbox:\n%s", bare)
			want, err := os.ReadFile(tg.path)
			require.NoError(t, err)

			cfg := w.config()
			cfg.ReadOnlyPaths = append(cfg.ReadOnlyPaths, home)
			r := w.sandboxed(cfg, `set -- "`+tg.path+`"; `+script)
			assert.NotEqual(t, 0, r.code, "read a credential store:\n%s", r)
			assert.NotContains(t, r.stdout, string(want))

			cfg.Reveal = []string{tg.store}
			r = w.sandboxed(cfg, `set -- "`+tg.path+`"; `+script)
			assert.Equal(t, string(want), r.stdout, "Reveal shows it again:\n%s", r)
		})
	}
}

// A credential store inside the workspace (here a home made writable on
// purpose) stays hidden, and cannot be moved aside to get at it.
func TestCredentialStoreInsideAWritableHome(t *testing.T) {
	for _, script := range []string{
		`cat "$H/.ssh/id_ed25519"`,
		`mv "$H/.ssh" "$H/ssh2" && cat "$H/ssh2/id_ed25519"`,
		`ls -a "$H/.ssh"`,
	} {
		t.Run(script, func(t *testing.T) {
			bareHome, _ := credentialHome(t)
			w := newWorld(t)
			w.vars = append(w.vars, "H="+bareHome)
			bare := w.bare(script)
			require.Regexp(t, "credential-|id_ed25519", bare.stdout, "the probe must work without the sandbox:\n%s", bare)

			home, files := credentialHome(t)
			w = newWorld(t)
			w.vars = append(w.vars, "H="+home)
			r := w.sandboxed(corral.Config{Workspace: home, AllowHome: true}, script)
			assert.NotRegexp(t, "credential-|id_ed25519", r.stdout, "reached a store inside the writable home:\n%s", r)
			assert.FileExists(t, files[".ssh/id_ed25519"], "the store is where it was")
		})
	}
}

// On the landlock rung the same file is kept by Landlock alone.
func TestPolicyFileIsReadOnlyOnEachRung(t *testing.T) {
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			for _, a := range policyAttacks {
				t.Run(a.name, func(t *testing.T) {
					w, file := policyScene(t)
					sb, _ := rungSandbox(t, rung, policyConfig(t, w, file))
					ctx, cancel := contextWithCancel(t)
					defer cancel()
					c := sb.Command(ctx, "sh", "-c", a.script)
					c.Env = w.env()
					out, _ := c.CombinedOutput()
					assert.Equal(t, corral.ModeEnabled, policyMode(t, file), "rewrote its own policy on rung %s:\n%s", rung, out)
				})
			}
		})
	}
}

// The landlock rung hides the stores with Landlock alone.
func TestCredentialStoresHiddenOnEachRung(t *testing.T) {
	_, files := credentialHome(t)
	paths := []string{files[".ssh/id_ed25519"], files[".aws/credentials"], files[".netrc"]}
	if _, err := os.ReadFile("/etc/shadow"); err == nil {
		paths = append(paths, "/etc/shadow")
	}
	w := newWorld(t)
	for _, p := range paths {
		bare := w.bare(`cat "` + p + `"`)
		require.Equal(t, 0, bare.code, "the probe must work without the sandbox:\n%s", bare)
	}
	for _, rung := range layRungs {
		t.Run(string(rung), func(t *testing.T) {
			sb, _ := rungSandbox(t, rung, corral.Config{Workspace: w.ws, ReadOnlyPaths: []string{filepath.Dir(filepath.Dir(files[".netrc"]))}})
			for _, p := range paths {
				ctx, cancel := contextWithCancel(t)
				c := sb.Command(ctx, "cat", p)
				out, err := c.Output()
				cancel()
				assert.Error(t, err, "read %s on rung %s: %s", p, rung, out)
				assert.NotContains(t, string(out), "credential-")
			}
		})
	}
}

// A file config.Runtime watches is kept read-only in the sandboxes built
// from what it hands out: a new file renamed into place is refused.
func TestWatchedPolicyFileIsReadOnly(t *testing.T) {
	attack := `set -- conf/new.toml; ` + disable + `; mv -f conf/new.toml conf/corral.toml`
	watch := func(t *testing.T, file string) *config.Runtime {
		r, err := config.Watch(file, nil)
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		return r
	}
	bare, file := policyScene(t)
	r := watch(t, file)
	cfg := r.Config().Agents[0].Sandbox.CorralConfig()
	cfg.Workspace, cfg.PolicyFiles = bare.ws, nil
	bare.sandboxed(cfg, attack)
	require.Eventually(t, func() bool { return r.Config().Agents[0].Sandbox.Mode == corral.ModeDisabled },
		10*time.Second, 10*time.Millisecond, "the probe must work without the protection")

	boxed, file := policyScene(t)
	r = watch(t, file)
	cfg = r.Config().Agents[0].Sandbox.CorralConfig()
	cfg.Workspace = boxed.ws
	res := boxed.sandboxed(cfg, attack)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, policyEnabled, string(got), "replaced the watched file:\n%s", res)
	assert.Equal(t, corral.ModeEnabled, r.Config().Agents[0].Sandbox.Mode)
}
