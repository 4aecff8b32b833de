package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// homeWith makes a fresh $HOME (for this process and the CLI it starts)
// holding an SSH key and an AWS credentials file.
func homeWith(t *testing.T) string {
	home := filepath.Join(workspace(t), "home")
	for _, f := range []string{".ssh/id_ed25519", ".aws/credentials"} {
		p := filepath.Join(home, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte("credential"), 0o600))
	}
	t.Setenv("HOME", home)
	return home
}

func TestRunRefusesTheHomeDirectory(t *testing.T) {
	home := homeWith(t)
	_, stderr, code := cli(t, home, "run", "--", "true")
	assert.Equal(t, 2, code, stderr)
	assertOneLine(t, stderr, "--workspace "+home+" (the current directory) is your home directory or holds it")
	assert.Contains(t, stderr, "pass --allow-home")

	_, stderr, code = cli(t, home, "run", "--workspace", filepath.Dir(home), "--", "true")
	assert.Equal(t, 2, code, stderr)
	assertOneLine(t, stderr, "is your home directory or holds it")

	_, stderr, code = cli(t, workspace(t), "run", "--writable", home, "--", "true")
	assert.Equal(t, 2, code, stderr)
	assertOneLine(t, stderr, "--writable "+home+" is your home directory")

	needsSandbox(t)
	stdout, stderr, code := cli(t, home, "run", "--allow-home", "--", "sh", "-c", "echo made > made; cat .ssh/id_ed25519 || echo hidden")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "hidden\n", stdout, "the stores stay hidden in an allowed home")
	assert.FileExists(t, filepath.Join(home, "made"))

	stdout, stderr, code = cli(t, filepath.Join(home, ".aws"), "run", "--reveal", filepath.Join(home, ".aws"), "--", "cat", "credentials")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "credential", stdout, "a subdirectory of home is fine; --reveal shows a store")
}

func TestRunRefusesPseudoFilesystems(t *testing.T) {
	ws := workspace(t)
	for _, args := range [][]string{
		{"--writable", "/proc"},
		{"--writable", "/dev/shm"},
		{"--read-only", "/sys/kernel"},
		{"--workspace", "/"},
		{"--changeset", filepath.Join(workspace(t), "cs"), "--changeset-writable", "/dev"},
	} {
		_, stderr, code := cli(t, ws, append(append([]string{"run"}, args...), "--", "true")...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assertOneLine(t, stderr, args[len(args)-1])
	}
}

func TestRunWorkspaceInsideACredentialStore(t *testing.T) {
	home := homeWith(t)
	ssh := filepath.Join(home, ".ssh")
	_, stderr, code := cli(t, ssh, "run", "--", "true")
	assert.Equal(t, 2, code, stderr)
	assertOneLine(t, stderr, "a credential store hidden by default; add it to Reveal (--reveal "+ssh+")")
}

// The config file lies in the workspace (docs/cli.md, --config). A command
// cannot turn the next one's sandbox off by rewriting it.
func TestRunConfigFileInTheWorkspaceStaysReadOnly(t *testing.T) {
	needsSandbox(t)
	ws := workspace(t)
	file := filepath.Join(ws, "corral.toml")
	const enabled = "[[agents]]\nid = \"a\"\n\n[agents.sandbox]\nmode = \"enabled\"\n"
	require.NoError(t, os.WriteFile(file, []byte(enabled), 0o644))

	_, _, code := cli(t, ws, "run", "--config", "corral.toml", "--", "sh", "-c",
		`echo note > note.txt; sed -i s/enabled/disabled/ corral.toml; printf 'mode = "disabled"\n' >> corral.toml; rm -f corral.toml`)
	assert.NotEqual(t, 0, code)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, enabled, string(got))
	assert.FileExists(t, filepath.Join(ws, "note.txt"), "the rest of the workspace stays writable")

	stdout, stderr, code := cli(t, ws, "run", "--config", "corral.toml", "--", "sh", "-c", "echo x > /etc/corral-probe 2>/dev/null || echo denied")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "denied\n", stdout, "the next command still runs sandboxed")

	stdout, stderr, code = cli(t, ws, "profile", "--platform", "linux", "--config", "corral.toml")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "policy files, read-only to the command:\n  "+file+"\n")
	assert.Contains(t, stdout, "ro-bind  "+file)
}

func TestProfileAndDoctorListHiddenStores(t *testing.T) {
	home := homeWith(t)
	ws := workspace(t)
	stdout, stderr, code := cli(t, ws, "profile", "--platform", "linux")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "credential stores hidden by default (--reveal PATH shows one):\n")
	assert.Contains(t, stdout, "  "+filepath.Join(home, ".ssh")+"\n")
	assert.Contains(t, stdout, "  "+filepath.Join(home, ".aws")+"\n")

	stdout, _, _ = cli(t, ws, "profile", "--platform", "linux", "--reveal", filepath.Join(home, ".aws"))
	assert.NotContains(t, stdout, filepath.Join(home, ".aws"))

	stdout, _, _ = cli(t, ws, "profile", "--platform", "darwin")
	assert.Contains(t, stdout, ";   "+filepath.Join(home, ".ssh")+"\n")

	stdout, _, _ = cli(t, ws, "doctor", "--fallback", "warn")
	assert.Contains(t, stdout, "  "+filepath.Join(home, ".ssh")+"\n")

	stdout, _, _ = cli(t, ws, "doctor", "--json", "--reveal", filepath.Join(home, ".ssh"))
	var r corral.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
	assert.Contains(t, r.HiddenByDefault, filepath.Join(home, ".aws"))
	assert.NotContains(t, r.HiddenByDefault, filepath.Join(home, ".ssh"))

	_, stderr, code = cli(t, ws, "doctor", "--reveal", "/no/such/store")
	assert.Equal(t, 2, code)
	assertOneLine(t, stderr, "config Reveal: /no/such/store: covers none of the credential stores")
}
