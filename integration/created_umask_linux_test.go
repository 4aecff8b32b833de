//go:build linux

package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/sandboxtest"
)

// umaskProbe creates files and directories under umasks changed in every
// way a process can: by the shell, in a subshell, by another thread of the
// same process after the first thread created with the old one, and in a
// forked child whose change its parent does not see; and after a file
// renamed onto a new protected name, which the init copies into a staged
// file there with the mode the file has. It prints each entry's mode.
const umaskProbe = `: > a; echo '{}' > m.tmp; mv m.tmp .mcp.json; : > g; mkdir dg; umask 077; : > b; mkdir d1; (umask 027; : > c; mkdir d2); : > e; umask 002; : > f
python3 - <<'EOF'
import os, threading
os.umask(0o022)
open("t0", "w").close()
t = threading.Thread(target=lambda: os.umask(0o077))
t.start(); t.join()
open("t1", "w").close()
done = threading.Event()
def other():
    os.umask(0o027)
    done.set()
    threading.Event().wait(0.3)
t = threading.Thread(target=other)
t.start(); done.wait()
open("t2", "w").close()
t.join()
os.umask(0o022)
pid = os.fork()
if pid == 0:
    os.umask(0o007)
    open("k1", "w").close()
    os._exit(0)
os.waitpid(pid, 0)
open("t3", "w").close()
EOF
stat -c '%n %a' a g dg b c d1 d2 e f t0 t1 t2 k1 t3`

// The init creates what the command creates (the name-creating calls stop
// in its listener) with the command's umask, which it follows without
// reading /proc for every call: every change of it, by any thread, is seen
// before the next file is made. The same probe without the sandbox gives
// the modes to expect.
func TestCreatedFollowsUmask(t *testing.T) {
	requireTool(t, "python3")
	control := newWorld(t)
	r := control.bare(umaskProbe)
	require.Equal(t, 0, r.code, r.String())
	want := strings.TrimSpace(r.stdout)
	require.Contains(t, want, "t1 600", "without the sandbox the other thread's umask holds")

	w := newWorld(t)
	cfg := w.config()
	sandboxtest.Require(t, cfg)
	sb, err := corral.New(cfg)
	require.NoError(t, err)
	defer sb.Close()
	c := sb.Command(context.Background(), "sh", "-c", umaskProbe)
	c.Env = w.env()
	out, err := c.Output()
	require.NoError(t, err)
	require.Equal(t, want, strings.TrimSpace(string(out)))
}
