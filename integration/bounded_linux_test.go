//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A FIFO left in a repository's objects makes every later git on the host
// that reads them block (a shell prompt's git status, an editor). The
// command writes objects to the host's directory directly; a FIFO or
// socket there is refused. Without the sandbox the FIFO is made.
func TestNoFIFOInObjects(t *testing.T) {
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		initRepo(t, w)
		// A write first, so the repository is staged.
		script := `git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x; mkfifo .git/objects/info/alternates`
		var r result
		if boxed {
			r = w.sandboxed(w.config(), gitEnv+script)
		} else {
			r = w.bare(gitEnv + script)
		}
		// Every git on the host opens objects/info/alternates.
		fi, err := os.Lstat(filepath.Join(w.ws, ".git/objects/info/alternates"))
		fifo := err == nil && fi.Mode()&os.ModeNamedPipe != 0
		if boxed {
			assert.False(t, fifo, "a FIFO landed in the host's objects: %s", r)
		} else {
			require.True(t, fifo, "the FIFO must be made without the sandbox: %s", r)
		}
	}
}

// Thousands of junk entries in a .git are dropped and reported, and the
// report stays bounded: the command's own status still arrives.
func TestManyDroppedKeepTheStatus(t *testing.T) {
	w := newWorld(t)
	initRepo(t, w)
	r := w.sandboxed(w.config(), `i=0; while [ $i -lt 6000 ]; do : > .git/junk$i; i=$((i+1)); done; exit 3`)
	assert.Equal(t, 3, r.code, "%s", r)
	for _, e := range []string{"junk0", "junk5999"} {
		_, err := os.Stat(filepath.Join(w.ws, ".git", e))
		assert.ErrorIs(t, err, os.ErrNotExist)
	}
	assert.False(t, strings.Contains(r.stderr, "init died"))
}

// Staged content lives in memory until the command exits: all of it
// together is bounded by the /tmp limit, a new protected directory's and a
// staged repository's alike. Without the sandbox the writes land whole.
func TestStagingIsBounded(t *testing.T) {
	script := gitEnv + `mkdir .vscode && head -c 40M /dev/zero > .vscode/big; git commit -q --allow-empty -m x && head -c 40M /dev/zero > .git/big; true`
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		initRepo(t, w)
		var r result
		if boxed {
			cfg := w.config()
			cfg.Limits.TmpSize = 16 << 20
			r = w.sandboxed(cfg, script)
		} else {
			r = w.bare(script)
		}
		if !boxed {
			fi, err := os.Stat(filepath.Join(w.ws, ".vscode/big"))
			require.NoError(t, err)
			require.Equal(t, int64(40<<20), fi.Size())
			continue
		}
		assert.Contains(t, r.stderr, "No space left on device", "%s", r)
		for _, p := range []string{".vscode/big", ".git/big"} {
			if fi, err := os.Stat(filepath.Join(w.ws, p)); err == nil {
				assert.Less(t, fi.Size(), int64(40<<20), p)
			}
		}
	}
}

// Many threads opening an existing FIFO with O_CREAT each wait in the
// kernel for a reader, as on the host; none of them holds up the init or
// costs the command its work: the reader comes, every writer finishes and
// a commit afterwards lands. Run without the sandbox, the same script
// behaves the same, which is what this holds the sandbox to.
func TestManyWritersOnAFIFO(t *testing.T) {
	const script = gitEnv + `mkfifo p && python3 - <<'PY'
import os, threading
def write():
    fd = os.open("p", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"x")
    os.close(fd)
ts = [threading.Thread(target=write) for _ in range(64)]
for t in ts: t.start()
got = b""
while len(got) < 64:
    fd = os.open("p", os.O_RDONLY)
    while True:
        b = os.read(fd, 64)
        if not b: break
        got += b
    os.close(fd)
for t in ts: t.join()
print("read", len(got))
PY
echo data > f && git add f && git commit -q -m fifo && git log --oneline | wc -l`
	for _, boxed := range []bool{false, true} {
		w := newWorld(t)
		initRepo(t, w)
		var r result
		if boxed {
			r = w.sandboxed(w.config(), script)
		} else {
			r = w.bare(script)
		}
		require.Equal(t, 0, r.code, "boxed=%v: %s", boxed, r)
		assert.Contains(t, r.stdout, "read 64", "boxed=%v", boxed)
		assert.NotContains(t, r.stderr, "init died")
		assert.Equal(t, "fifo", strings.TrimSpace(hostGit(t, w, `git log --format=%s -1`)), "boxed=%v: the commit must land", boxed)
	}
}
