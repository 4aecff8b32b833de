package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
)

// persistConfig is w's config with a persistent home and /tmp kept in
// state.
func persistConfig(w *world, state string) corral.Config {
	cfg := w.config()
	cfg.PersistHome = filepath.Join(state, "home")
	cfg.PersistTmp = filepath.Join(state, "tmp")
	return cfg
}

// A file left in /tmp and one in the home's cache are there for the next
// command of the same state, and absent from another state's; the host's
// home is never written.
func TestPersistentHomeAndTmp(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	home, err = filepath.EvalSymlinks(home)
	require.NoError(t, err)
	w := newWorld(t)
	w.vars = append(w.vars, "H="+home)
	mark := "corral-persist-" + filepath.Base(w.ws)
	w.vars = append(w.vars, "MARK="+mark)
	state, other := realDir(t), realDir(t)

	r := w.sandboxed(persistConfig(w, state), `echo kept > /tmp/$MARK && mkdir -p "$H/.cache/$MARK" && echo cached > "$H/.cache/$MARK/f" && echo ok`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.False(t, exists(filepath.Join(home, ".cache", mark)), "the host's home is not written")

	r = w.sandboxed(persistConfig(w, state), `cat /tmp/$MARK "$H/.cache/$MARK/f"`)
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, "kept\ncached\n", r.stdout, "the next command of the same state sees both")

	r = w.sandboxed(persistConfig(w, other), `cat /tmp/$MARK; cat "$H/.cache/$MARK/f"; echo done`)
	assert.NotContains(t, r.stdout, "kept", "another state has its own /tmp")
	assert.NotContains(t, r.stdout, "cached", "and its own home")

	// Control: without persistence the next command starts afresh.
	r = w.sandboxed(w.config(), `echo kept > /tmp/$MARK`)
	require.Equal(t, 0, r.code, "%s", r)
	r = w.sandboxed(w.config(), `cat /tmp/$MARK`)
	assert.NotEqual(t, 0, r.code, "a plain sandbox's /tmp is gone after each command: %s", r)
	w.sandboxed(w.config(), `mkdir -p "$H/.cache/$MARK" && echo cached > "$H/.cache/$MARK/f"`)
	r = w.sandboxed(w.config(), `cat "$H/.cache/$MARK/f"`)
	assert.NotEqual(t, 0, r.code, "nor does a write to its home outlive the command: %s", r)
}

// The state directory is hidden from the commands that use it, and the
// credential stores stay hidden in the layered home.
func TestPersistentStateIsHidden(t *testing.T) {
	w := newWorld(t)
	state := realDir(t)
	w.vars = append(w.vars, "STATE="+state)
	r := w.sandboxed(persistConfig(w, state), `ls "$STATE/home"`)
	assert.NotEqual(t, 0, r.code, "the upper directory cannot be listed: %s", r)
	ctl := w.bare(`mkdir -p "$STATE/home" && ls "$STATE/home"`)
	assert.Equal(t, 0, ctl.code, "%s", ctl)

	home, err := os.UserHomeDir()
	require.NoError(t, err)
	secret := filepath.Join(home, ".corral-persist-secret-"+filepath.Base(state))
	require.NoError(t, os.WriteFile(secret, []byte("s3cr3t-home"), 0o600))
	t.Cleanup(func() { os.Remove(secret) })
	cfg := persistConfig(w, state)
	cfg.HiddenPaths = append(cfg.HiddenPaths, secret)
	w.vars = append(w.vars, "HS="+secret)
	r = w.sandboxed(cfg, `cat "$HS"; rm -f "$HS"; echo x > "$HS"; cat "$HS"`)
	assert.NotContains(t, r.stdout, "s3cr3t", "a hidden file in the home stays hidden: %s", r)
	assert.True(t, fileHas(secret, "s3cr3t-home"), "and the host's copy is untouched")
	ctl = w.bare(`cat "$HS"`)
	assert.Contains(t, ctl.stdout, "s3cr3t", "control: the host reads it")
}
