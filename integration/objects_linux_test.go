//go:build linux

package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// A commit's objects reach the host's objects directory while the command
// runs, as git writes them; the ref that names the commit lands only at
// exit, with the rest of the staged .git.
func TestObjectsLandWhileRunning(t *testing.T) {
	w := newWorld(t)
	initRepo(t, w)
	head := strings.TrimSpace(hostGit(t, w, `git rev-parse HEAD`))
	blob := strings.TrimSpace(hostGit(t, w, `echo landed-early | git hash-object --stdin`))
	cfg := w.config()
	whileRunning(t, w, &cfg, `echo landed-early > n && git add n && git commit -qm n`, func() {
		assert.FileExists(t, filepath.Join(w.ws, ".git/objects", blob[:2], blob[2:]), "the object is on the host at once")
		assert.Equal(t, head, strings.TrimSpace(hostGit(t, w, `git rev-parse HEAD`)), "the branch moves only at exit")
	})
	assert.NotEqual(t, head, strings.TrimSpace(hostGit(t, w, `git rev-parse HEAD`)))
	assert.Contains(t, hostGit(t, w, `git fsck --no-dangling 2>&1; git log --format=%s -1`), "n")
}

// What in the objects directory could send git on the host elsewhere is
// not put there (under names no object directory has): a symlink (made there, moved in, or hard-linked in), a
// directory moved in from outside (mv copies it instead), a new
// objects/info/alternates, and a change to an existing one. Without the
// sandbox each of them is made.
func TestObjectsRedirectsRefused(t *testing.T) {
	const script = `ln -s "$OUTSIDE" .git/objects/zz-made; echo "symlink=$?"; ` +
		`ln -s "$OUTSIDE" l && mv l .git/objects/zz-moved; echo "moved-link=$?"; ` +
		`ln -s "$OUTSIDE" l2 && ln l2 .git/objects/zz-linked 2>/dev/null; echo "linked-link=$?"; ` +
		`mkdir -p d/x && mv d .git/objects/zz-dir; echo "moved-dir=$?"; ` +
		`echo "$OUTSIDE" > .git/objects/info/alternates; echo "alternates=$?"; ` +
		`echo "$OUTSIDE" >> .git/objects/info/http-alternates; echo "http=$?"`
	w := newWorld(t)
	initRepo(t, w)
	objects := filepath.Join(w.ws, ".git/objects")
	require.NoError(t, os.WriteFile(filepath.Join(objects, "info/http-alternates"), []byte("https://example.com/\n"), 0o644))
	cfg := w.config()
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()
	c := sb.Command(context.Background(), "sh", "-c", script)
	c.Env, c.Dir = w.env(), w.ws
	out, _ := c.CombinedOutput()
	for _, s := range []string{"symlink=1", "moved-link=1", "linked-link=1", "moved-dir=0", "alternates=2", "http=2"} {
		assert.Contains(t, string(out), s)
	}
	for _, name := range []string{"zz-made", "zz-moved", "zz-linked", "info/alternates"} {
		_, err := os.Lstat(filepath.Join(objects, name))
		assert.True(t, os.IsNotExist(err), "%s is not on the host", name)
	}
	fi, err := os.Lstat(filepath.Join(objects, "zz-dir"))
	require.NoError(t, err)
	assert.True(t, fi.IsDir(), "the directory was copied in, not moved")
	b, err := os.ReadFile(filepath.Join(objects, "info/http-alternates"))
	require.NoError(t, err)
	assert.Equal(t, "https://example.com/\n", string(b))
	dropped := strings.Join(c.Dropped(), "\n")
	assert.Contains(t, dropped, filepath.Join(objects, "zz-made")+": refused")
	assert.Contains(t, dropped, filepath.Join(objects, "info/alternates")+": refused")

	control := newWorld(t)
	initRepo(t, control)
	require.NoError(t, os.WriteFile(filepath.Join(control.ws, ".git/objects/info/http-alternates"), []byte("https://example.com/\n"), 0o644))
	r := control.bare(script)
	for _, s := range []string{"symlink=0", "moved-link=0", "linked-link=0", "moved-dir=0", "alternates=0", "http=0"} {
		assert.Contains(t, r.stdout, s, "without the sandbox: %s", r)
	}
}
