package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sbplcheck"
	"github.com/corralhq/corral/seatbelt"
)

// linkedWorkspace makes a workspace with a git directory, a data directory
// and a secret file, reached through a symlink so that resolving it shows.
func linkedWorkspace(t *testing.T) (link, real string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{".git/hooks", "data"} {
		require.NoError(t, os.MkdirAll(filepath.Join(real, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(real, ".env"), []byte("KEY=1\n"), 0o600))
	link = filepath.Join(t.TempDir(), "ws")
	require.NoError(t, os.Symlink(real, link))
	return link, real
}

var paramLine = regexp.MustCompile(`(?m)^;\s+-D([A-Z0-9_]+)=(.*) \\$`)

func TestProfileDarwin(t *testing.T) {
	link, real := linkedWorkspace(t)
	out, errOut, code := cli(t, real, "profile", "--platform", "darwin", "--workspace", link,
		"--read-only", link+"/data", "--hide", link+"/.env", "--net", "none")
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)

	params := map[string]string{}
	var names []string
	for _, m := range paramLine.FindAllStringSubmatch(out, -1) {
		params[m[1]] = m[2]
		names = append(names, m[1])
	}
	require.NoError(t, sbplcheck.Check(out, names), "the whole output is a well-formed profile")
	ws := seatbelt.Canonical(real)
	assert.Equal(t, ws, params["WORKSPACE"], "resolved through the symlink, as run does")
	assert.Equal(t, ws+"/data", params["READ_ONLY_0"])
	assert.Equal(t, ws+"/.env", params["HIDDEN_0"])
	assert.Contains(t, params, "TMPDIR")
	assert.Contains(t, out, "(allow system-socket (socket-domain AF_UNIX))", "--net none")
	assert.NotContains(t, out, "(remote ip")

	text := out[strings.Index(out, "(version 1)"):]
	for name, v := range params {
		assert.NotContains(t, text, v, "parameter %s reaches the profile text", name)
	}
	var protected []string
	for name, v := range params {
		if strings.HasPrefix(name, "PROTECTED_") {
			protected = append(protected, strings.TrimPrefix(v, ws+"/"))
		}
	}
	assert.Contains(t, protected, ".git")
	assert.Contains(t, protected, ".bashrc")
}

func TestProfileLinux(t *testing.T) {
	link, real := linkedWorkspace(t)
	tests := []struct {
		name    string
		args    []string
		netNone bool
	}{
		{"host network", nil, false},
		{"no network", []string{"--net", "none"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"profile", "--platform", "linux", "--workspace", link,
				"--read-only", link + "/data", "--hide", link + "/.env"}, tt.args...)
			out, errOut, code := cli(t, real, args...)
			require.Equal(t, 0, code, errOut)
			for _, l := range []corral.Layer{corral.LayerUserNS, corral.LayerMountNS, corral.LayerPIDNS, corral.LayerKernelNS, corral.LayerProc, corral.LayerLandlock, corral.LayerSeccomp} {
				assert.Contains(t, out, string(l))
			}
			assert.Equal(t, tt.netNone, strings.Contains(out, string(corral.LayerNetNS)))
			for _, m := range []string{
				"ro-root  /\n",
				"bind     " + real,
				"ro-bind  " + real + "/data\n",
				"hide     " + real + "/.env\n",
				"\n  .git                   at any depth ",
			} {
				assert.Contains(t, out, m)
			}
			assert.NotContains(t, out, link, "paths are resolved")
		})
	}
}

func TestProfileDefaultsToThisOS(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no default platform on " + runtime.GOOS)
	}
	link, real := linkedWorkspace(t)
	def, _, code := cli(t, real, "profile", "--workspace", link)
	require.Equal(t, 0, code)
	explicit, _, _ := cli(t, real, "profile", "--platform", runtime.GOOS, "--workspace", link)
	assert.Equal(t, explicit, def)
}

func TestProfileIgnoresACommandAfterDash(t *testing.T) {
	link, real := linkedWorkspace(t)
	with, _, code := cli(t, real, "profile", "--workspace", link, "--", "sh", "-c", "echo hi")
	require.Equal(t, 0, code)
	without, _, _ := cli(t, real, "profile", "--workspace", link)
	assert.Equal(t, without, with, "a run command line prints the same profile")
}

func TestProfileErrors(t *testing.T) {
	link, real := linkedWorkspace(t)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad platform", []string{"--platform", "windows", "--workspace", link}, exitUsage, `--platform "windows": want linux or darwin`},
		{"argument without --", []string{"--workspace", link, "sh"}, exitUsage, `unexpected argument "sh"`},
		{"unknown flag", []string{"--bogus"}, exitUsage, "unknown flag"},
		{"missing workspace", []string{"--workspace", filepath.Join(link, "missing")}, exitUsage, "--workspace " + filepath.Join(link, "missing") + ": does not exist"},
		{"bad network", []string{"--workspace", link, "--net", "wifi"}, exitUsage, `--net "wifi"`},
		{"negative timeout", []string{"--workspace", link, "--timeout", "-1s"}, exitUsage, "--timeout"},
		{"config missing", []string{"--workspace", link, "--config", filepath.Join(real, "missing.toml")}, exitUsage, "load config"},
		{"agent without config", []string{"--workspace", link, "--agent", "coder"}, exitUsage, "--agent needs --config"},
		{"hidden workspace", []string{"--platform", "darwin", "--workspace", link, "--hide", filepath.Dir(real)}, exitUsage, "--hide " + filepath.Dir(real) + ": contains"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := cli(t, real, append([]string{"profile"}, tt.args...)...)
			assert.Equal(t, tt.code, code)
			assert.Empty(t, out)
			assertOneLine(t, errOut, tt.want)
		})
	}
}

// TestProfileTakesRunFlags keeps profile's flags those of run, so that a
// run command line turns into a profile one by changing the word.
func TestProfileTakesRunFlags(t *testing.T) {
	profile := newProfileCmd().Flags()
	newRunCmd().Flags().VisitAll(func(f *pflag.Flag) {
		pf := profile.Lookup(f.Name)
		if assert.NotNil(t, pf, "--%s", f.Name) {
			assert.Equal(t, f.Value.Type(), pf.Value.Type(), "--%s", f.Name)
			assert.Equal(t, f.DefValue, pf.DefValue, "--%s", f.Name)
		}
	})
	assert.NotNil(t, profile.Lookup("platform"))
}

// --protect and a config file's protect add names, shown with the list;
// a name that is no name is a usage error naming the flag or the key.
func TestProfileShowsProtect(t *testing.T) {
	link, real := linkedWorkspace(t)
	conf := writeConfig(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nprotect = [\"x.code-workspace\"]\n")
	out, errOut, code := cli(t, real, "profile", "--platform", "linux", "--workspace", link, "--config", conf,
		"--protect", "tools/hooks", "--protect", "nbstripout.py", "--protect", ".envrc")
	require.Equal(t, 0, code, errOut)
	for _, m := range []string{
		"\n  x.code-workspace       at any depth  named by the configuration (protect)\n",
		"\n  tools/hooks            at the top    named by the configuration (protect)\n",
		"\n  nbstripout.py          at any depth  named by the configuration (protect)\n",
	} {
		assert.Contains(t, out, m)
	}
	assert.Equal(t, 1, strings.Count(out, "\n  .envrc "), "a listed name is listed once")

	_, errOut, code = cli(t, real, "profile", "--platform", "linux", "--workspace", link, "--protect", "../x")
	assert.Equal(t, exitUsage, code)
	assertOneLine(t, errOut, `--protect ../x: must not hold ".."`)

	bad := writeConfig(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nprotect = [\"/etc/x\"]\n")
	_, errOut, code = cli(t, real, "profile", "--platform", "linux", "--workspace", link, "--config", bad)
	assert.Equal(t, exitUsage, code)
	assertOneLine(t, errOut, `agents[0].sandbox.protect[0]: "/etc/x": want a name relative to each writable root, not an absolute path`)
}
