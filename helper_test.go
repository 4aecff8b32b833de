package corral

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveHelperErrors(t *testing.T) {
	ws, other := t.TempDir(), t.TempDir()
	inWs := filepath.Join(ws, "corral")
	inOther := filepath.Join(other, "corral")
	plain := filepath.Join(t.TempDir(), "plain")
	for _, p := range []string{inWs, inOther} {
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o755))
	}
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(inWs, link))
	for _, tc := range []struct {
		name string
		cfg  Config
		env  string
		want string
	}{
		{"relative", Config{Helper: "bin/corral"}, "", "config Helper: bin/corral: want an absolute path"},
		{"relative from the environment", Config{}, "corral", "config CORRAL_HELPER: corral: want an absolute path"},
		{"missing", Config{Helper: "/nonexistent/corral"}, "", "does not exist"},
		{"not executable", Config{Helper: plain}, "", "not an executable file"},
		{"a directory", Config{Helper: other}, "", "not an executable file"},
		{"in the workspace", Config{Helper: inWs}, "", "inside the writable path"},
		{"a link into the workspace", Config{Helper: link}, "", "inside the writable path"},
		{"in a writable path", Config{Helper: inOther, WritablePaths: []string{other}}, "", "inside the writable path"},
		{"in the workspace, with DirectSpawn", Config{Helper: inWs, DirectSpawn: true}, "", "inside the writable path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(HelperEnv, tc.env)
			tc.cfg.Workspace = ws
			_, err := tc.cfg.resolve()
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestResolveHelper(t *testing.T) {
	ws := t.TempDir()
	helper := filepath.Join(t.TempDir(), "corral")
	require.NoError(t, os.WriteFile(helper, []byte("x"), 0o755))
	real, err := filepath.EvalSymlinks(helper)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		cfg  Config
		env  string
		want string
	}{
		{"none", Config{}, "", ""},
		{"the field", Config{Helper: helper}, "", real},
		{"the environment", Config{}, helper, real},
		{"the field wins", Config{Helper: helper}, "/nonexistent", real},
		{"DirectSpawn, the field", Config{DirectSpawn: true, Helper: helper}, "", real},
		{"DirectSpawn, the environment", Config{DirectSpawn: true}, helper, real},
		{"disabled ignores it", Config{Mode: ModeDisabled}, "relative", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(HelperEnv, tc.env)
			tc.cfg.Workspace = ws
			s, err := tc.cfg.resolve()
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.Helper)
		})
	}
}
